"""Configuration: where it binds (loopback unless told), the CLI flags, the limiters' state."""

from __future__ import annotations

import pytest

import rcpkit.transport.http
from rcpkit.cli import _parser
from rcpkit.cli.http_serve import config_from_args
from rcpkit.server.dispatcher import DEFAULT_DEADLINE
from rcpkit.transport.http import HttpConfig, RateLimit, parse_bind
from rcpkit.transport.http.config import is_loopback
from rcpkit.transport.http.limits import ConcurrencyLimiter, RateLimiter, Refusal


def test_a_bare_port_binds_to_loopback() -> None:
    assert parse_bind("8080") == ("127.0.0.1", 8080)
    assert parse_bind(":0") == ("127.0.0.1", 0)


def test_binding_elsewhere_is_explicit() -> None:
    assert parse_bind("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_bind("[::1]:9000") == ("::1", 9000)
    assert parse_bind("localhost:1") == ("localhost", 1)
    assert is_loopback("::1") and is_loopback("localhost") and is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.com")


@pytest.mark.parametrize("value", ["", "http", "host:port", "1:99999"])
def test_a_malformed_bind_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match=r"HOST:|range"):
        parse_bind(value)


def test_the_serve_command_maps_its_flags_onto_the_config() -> None:
    args = _parser().parse_args(
        [
            "serve",
            "--engine",
            "keyword",
            "--http",
            "9000",
            "--stateful",
            "--base",
            "/v1/rcp",
            "--cors-origin",
            "https://a.example",
            "--rate-limit",
            "50",
            "--max-body-bytes",
            "4096",
            "--deadline",
            "2.5",
            "--max-concurrent",
            "0",
        ]
    )
    config, listen = config_from_args(args)
    assert (listen.host, listen.port) == ("127.0.0.1", 9000)
    assert config.stateful and config.base == "/v1/rcp"
    assert config.cors_origins == ("https://a.example",)
    assert config.rate_limit == RateLimit(50.0, 50)
    assert (config.max_body_bytes, config.deadline, config.max_concurrent) == (4096, 2.5, None)
    assert not config.tenant_aware


def test_stdio_stays_the_default_and_excludes_http() -> None:
    args = _parser().parse_args(["serve", "--engine", "keyword"])
    assert args.http is None
    both = _parser().parse_args(["serve", "--stdio", "--http", "8080"])
    with pytest.raises(ValueError, match="pick one"):
        config_from_args(both)


def test_a_base_path_must_be_absolute_without_a_trailing_slash() -> None:
    for base in ("rcp", "/rcp/"):
        with pytest.raises(ValueError, match="base path"):
            HttpConfig(base=base)
    assert HttpConfig(base="/").base == "/"


def test_a_token_bucket_allows_its_burst_then_one_per_interval() -> None:
    now = [0.0]
    limiter = RateLimiter(RateLimit(rate=2.0, burst=3), clock=lambda: now[0])
    assert [limiter.acquire("c") for _ in range(3)] == [None, None, None]
    assert limiter.acquire("c") == 500  # ms until the next token
    now[0] += 0.5
    assert limiter.acquire("c") is None
    assert limiter.acquire("other") is None


def test_a_token_bucket_remembers_a_bounded_number_of_callers() -> None:
    limiter = RateLimiter(RateLimit(rate=1.0, burst=1), clock=lambda: 0.0, max_callers=2)
    for caller in ("a", "b", "c"):
        assert limiter.acquire(caller) is None
    assert len(limiter._buckets) == 2


def test_the_concurrency_limiter_counts_per_caller_and_in_all() -> None:
    limiter = ConcurrencyLimiter(per_caller=1, total=2)
    assert limiter.acquire("a") is None
    assert limiter.acquire("a") is Refusal.CALLER
    assert limiter.acquire("b") is None
    assert limiter.acquire("c") is Refusal.SERVER
    limiter.release("a")
    assert limiter.acquire("c") is None
    assert limiter.in_flight == 2


def test_the_http_package_exports_exactly_its_public_names() -> None:
    assert set(rcpkit.transport.http.__all__) == {
        "Credential",
        "Credentials",
        "HeadLimits",
        "HttpApp",
        "HttpConfig",
        "Listen",
        "Principal",
        "RateLimit",
        "build_http_app",
        "parse_bind",
        "run_http",
        "serve_http",
    }
    for name in rcpkit.transport.http.__all__:
        assert hasattr(rcpkit.transport.http, name)


def test_http_requests_get_the_server_default_deadline_unless_told() -> None:
    def deadline(*flags: str) -> float | None:
        args = _parser().parse_args(["serve", "--http", "0", *flags])
        return config_from_args(args)[0].deadline

    assert HttpConfig().deadline == DEFAULT_DEADLINE == deadline()
    assert deadline("--deadline", "5") == 5.0
    assert deadline("--deadline", "0") is None
