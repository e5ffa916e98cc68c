"""The §12.2 retry policy as a pure function: what is retried, how long it waits."""

from __future__ import annotations

import pytest

from rcpkit.client import NO_RETRY, DeadlineExceeded, RetryPolicy, TransportClosed
from rcpkit.client.retry import is_idempotent
from rcpkit.protocol import RCPError

POLICY = RetryPolicy(attempts=4, base_delay=0.1, multiplier=2.0, max_delay=0.3, jitter=0.5)


def _delay(
    error: RCPError, attempt: int = 1, method: str = "retrieve", **params: object
) -> float | None:
    return POLICY.delay(error, attempt, method, params, uniform=lambda: 1.0)


@pytest.mark.parametrize("code", [-32011, -32010, -32014])
def test_transient_codes_are_retried(code: int) -> None:
    assert _delay(RCPError(code, "x")) is not None


@pytest.mark.parametrize("code", [-32002, -32003, -32004, -32005, -32602, -32006, -32012, -32013])
def test_programming_and_capability_errors_are_never_retried(code: int) -> None:
    assert _delay(RCPError(code, "x")) is None


def test_backoff_grows_exponentially_up_to_the_cap() -> None:
    error = RCPError(-32010, "down")
    assert [_delay(error, attempt) for attempt in (1, 2, 3)] == pytest.approx([0.1, 0.2, 0.3])
    assert _delay(error, 4) is None  # attempts exhausted


def test_jitter_keeps_the_wait_within_its_fraction_of_the_backoff() -> None:
    error = RCPError(-32010, "down")
    low = POLICY.delay(error, 1, "retrieve", {}, uniform=lambda: 0.0)
    assert low == pytest.approx(0.05)


def test_a_server_hint_is_honoured_but_capped() -> None:
    assert _delay(RCPError(-32011, "x", retry_after_ms=1500)) == pytest.approx(1.5)
    capped = RetryPolicy(max_retry_after=0.5).delay(
        RCPError(-32011, "x", retry_after_ms=60_000), 1, "retrieve", {}
    )
    assert capped == pytest.approx(0.5)


def test_an_internal_error_is_retried_once() -> None:
    error = RCPError(-32603, "boom")
    assert _delay(error, 1) is not None
    assert _delay(error, 2) is None


def test_the_server_retryable_flag_overrides_the_table() -> None:
    assert _delay(RCPError(-32010, "x", retryable=False)) is None
    assert _delay(RCPError(-32016, "x", retryable=True)) is not None


def test_a_local_deadline_or_a_dead_transport_is_never_retried() -> None:
    assert _delay(DeadlineExceeded("retrieve", 1.0)) is None
    assert _delay(TransportClosed("gone")) is None


def test_writes_are_retried_only_when_idempotent() -> None:
    error = RCPError(-32010, "down")
    assert _delay(error, method="index/add", documents=[{"text": "a"}]) is None
    assert _delay(error, method="index/add", documents=[{"id": "a", "text": "a"}]) is not None
    assert _delay(error, method="index/add", documents=[], _meta={"idempotencyKey": "k"})
    assert _delay(error, method="index/delete", ids=["a"]) is not None
    assert _delay(error, method="memory/build") is None


def test_reads_are_idempotent_and_no_retry_means_one_attempt() -> None:
    assert is_idempotent("retrieve", {"query": "q"})
    assert NO_RETRY.delay(RCPError(-32010, "x"), 1, "retrieve", {}) is None
