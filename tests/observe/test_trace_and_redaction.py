"""Trace ids from W3C traceparent headers, and the redaction of logged queries (§15.6)."""

from __future__ import annotations

import pytest

from rcpkit.observe.redact import redact
from rcpkit.observe.trace import trace_id_of, trace_id_of_traceparent


def test_a_valid_traceparent_yields_its_trace_id() -> None:
    header = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert trace_id_of_traceparent(header) == "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.mark.parametrize(
    "header",
    [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # all-zero parent
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # forbidden version
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  # upper case
        "garbage",
    ],
)
def test_an_invalid_traceparent_is_ignored(header: str) -> None:
    assert trace_id_of_traceparent(header) is None


def test_a_trace_id_in_meta_is_taken_only_when_it_is_a_bounded_printable_string() -> None:
    assert trace_id_of({"traceId": "abc-1"}) == "abc-1"
    assert trace_id_of({"traceId": "x" * 129}) is None
    assert trace_id_of({"traceId": "a\nb"}) is None
    assert trace_id_of({"traceId": 7}) is None


def test_redaction_masks_emails_secrets_and_long_numbers_and_bounds_the_length() -> None:
    text = "mail bob.smith+x@corp.example.org, Bearer abc.def, api_key=XYZ, call +1 415-555-0100"
    assert redact(text) == "mail [email], [secret] api_key=[secret] call [number]"
    assert redact("sk_live_4eC39HqLyjWDarjtT1zdp7dc ok") == "[secret] ok"
    assert redact("a" * 300).endswith("…") and len(redact("a" * 300)) == 257
    assert redact("what is bm25 in 2024") == "what is bm25 in 2024"
