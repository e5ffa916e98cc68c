"""Typed configuration of the HTTP transport: what the app enforces and where it listens."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from rcpkit.server.dispatcher import DEFAULT_DEADLINE
from rcpkit.transport.http.auth import Credentials

__all__ = [
    "DEFAULT_BASE",
    "HeadLimits",
    "HttpConfig",
    "Listen",
    "RateLimit",
    "is_loopback",
    "parse_bind",
]

DEFAULT_BASE = "/rcp"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A token bucket per caller: ``rate`` requests a second sustained, ``burst`` at once."""

    rate: float
    burst: int

    def __post_init__(self) -> None:
        if self.rate <= 0 or self.burst < 1:
            raise ValueError("a rate limit needs rate > 0 and burst >= 1")


@dataclass(frozen=True, slots=True)
class HttpConfig:
    """What the ASGI app enforces (§5.2, §15). Every limit is per process.

    ``stateful``: ``initialize`` opens a session whose token comes back in
    ``_meta.session`` and travels in ``RCP-Session``; otherwise every request
    is implicitly initialized. ``credentials``: None serves without auth.
    ``tenant_aware``: the engine honours ``ctx.tenant``; tenant-scoped
    credentials are refused without it, so a tenant can never see everything.
    ``unauthenticated_writes``: without credentials, the server is read-only
    (writes are refused with -32012 and not advertised) unless this is set.
    ``deadline``: seconds per request (§13.1), the server default unless set;
    None for no deadline. ``threads``: the pool that runs CPU-bound handlers
    (worker processes are ``rcpkit serve --workers``, ``workers.py``).
    ``console``: also serve the web console's pages at ``/ui`` (public files;
    every call they make is authenticated like any other).
    """

    base: str = DEFAULT_BASE
    stateful: bool = False
    session_ttl: float = 1800.0
    max_sessions: int = 10_000
    max_sessions_per_caller: int = 100
    credentials: Credentials | None = None
    tenant_aware: bool = False
    unauthenticated_writes: bool = False
    cors_origins: tuple[str, ...] = ()
    rate_limit: RateLimit | None = None
    max_concurrent: int | None = 64
    max_inflight: int | None = 1024
    max_body_bytes: int = 16 * 1024 * 1024
    max_batch: int = 1024
    deadline: float | None = DEFAULT_DEADLINE
    threads: int = 4
    console: bool = False

    def __post_init__(self) -> None:
        if not self.base.startswith("/") or (self.base.endswith("/") and self.base != "/"):
            raise ValueError(f"base path {self.base!r} must start with '/' and not end with one")
        if self.max_body_bytes < 1 or self.max_batch < 1 or self.threads < 1:
            raise ValueError("body, batch and worker limits must be positive")
        if self.session_ttl <= 0:
            raise ValueError("session TTL must be positive")
        if self.credentials is not None and self.credentials.scoped and not self.tenant_aware:
            raise ValueError(
                "tenant-scoped credentials need an engine that honours ctx.tenant "
                "(this one does not: its documents would be visible to every tenant)"
            )


@dataclass(frozen=True, slots=True)
class HeadLimits:
    """What a request may cost the server before the app sees it (§15.5).

    ``max_header_bytes`` bounds the request line plus every header;
    ``max_headers`` their number. ``header_timeout`` bounds how long a request
    head may take once its first byte arrived, ``body_timeout`` how long its
    body may take once the head is complete (both in seconds, end to end, so a
    client trickling one byte at a time cannot stretch them).
    """

    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    header_timeout: float = 10.0
    body_timeout: float = 30.0

    def __post_init__(self) -> None:
        if min(self.max_header_bytes, self.max_headers) < 1:
            raise ValueError("header limits must be positive")
        if min(self.header_timeout, self.body_timeout) <= 0:
            raise ValueError("read timeouts must be positive")


@dataclass(frozen=True, slots=True)
class Listen:
    """Where and how the socket is served.

    ``drain_timeout`` bounds the graceful shutdown: in-flight requests get that
    long to finish after SIGTERM/SIGINT. ``trusted_proxies`` are the addresses
    whose ``X-Forwarded-For`` names the client (behind a load balancer).
    ``head`` bounds what a request costs before the app sees it.
    """

    host: str = LOOPBACK
    port: int = 8080
    keep_alive: int = 75
    drain_timeout: int = 30
    trusted_proxies: str | None = None
    backlog: int = 2048
    head: HeadLimits = HeadLimits()


def parse_bind(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` → (host, port); the host defaults to loopback (§15.1).

    IPv6 hosts are bracketed: ``[::1]:8080``.
    """
    host, _, port_text = value.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--http takes [HOST:]PORT, not {value!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is out of range")
    return host or LOOPBACK, port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
