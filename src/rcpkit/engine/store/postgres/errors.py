"""psycopg's exceptions as the protocol's errors, at the PostgreSQL store's edge (STYLE §3).

A lost or refused connection (a restart, a failover, a killed backend) is
``-32010`` BackendUnavailable, which a client retries (§12.2); the connection is
replaced on the next use. A read PostgreSQL cancelled (``query_canceled``: the
``statement_timeout`` the request's deadline set) is ``-32014`` (§13.1). Text
PostgreSQL cannot hold (U+0000 in ``text`` or ``jsonb``, a number out of a
column's range) refuses the write as ``-32602``.
Anything else stays unexpected: ``-32603``, logged, never shown to the peer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["deadline_exceeded", "psycopg", "unavailable", "unstorable"]


def psycopg() -> Any:
    try:
        import psycopg
    except ImportError as error:
        raise RuntimeError("install rcpkit[postgres] to use a postgres:// store") from error
    return psycopg


@contextmanager
def unavailable() -> Iterator[None]:
    """The store unreachable: -32010 (no library text: it names hosts and ports)."""
    try:
        yield
    except psycopg().OperationalError:
        message = "the PostgreSQL store is unavailable"
        raise RCPError(ErrorCode.BACKEND_UNAVAILABLE, message) from None


@contextmanager
def unstorable(field: str) -> Iterator[None]:
    """A value of the write PostgreSQL cannot store: -32602 on ``field``; nothing written."""
    try:
        yield
    except psycopg().DataError:
        raise RCPError.invalid_params(
            field,
            "the PostgreSQL store cannot hold a value of this write"
            " (a U+0000 character, or a number out of range)",
        ) from None


@contextmanager
def deadline_exceeded() -> Iterator[None]:
    """A statement cancelled by the deadline's ``statement_timeout``: -32014 (§13.1).

    Reads, writes and graph calls run under a deadline (``query_canceled`` is
    psycopg's ``QueryCanceled``, an ``OperationalError`` that is not an outage).
    """
    try:
        yield
    except psycopg().errors.QueryCanceled:
        raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True) from None
