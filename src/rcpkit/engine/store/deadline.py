"""The request's deadline as the store sees it: a context variable, not a parameter (§13.1).

The retrieve entry point opens a :func:`deadline_scope` with the request's
deadline (a ``time.monotonic()`` instant); a store that runs its reads
elsewhere (PostgreSQL) bounds each statement by :func:`remaining`, so SQL stops
when the deadline passes instead of running on after the ``-32014`` answer.
The embedded store reads in-process and ignores it: the pipeline's checkpoints
(``EngineRequest.check_cancelled``) already stop it between stages.

A context variable is per thread and per task, so concurrent requests on the
worker pool never see each other's deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["deadline_scope", "remaining"]

_DEADLINE: ContextVar[float | None] = ContextVar("rcpkit_store_deadline", default=None)


@contextmanager
def deadline_scope(deadline: float | None) -> Iterator[None]:
    """Reads made inside are bounded by ``deadline`` (monotonic seconds; None: unbounded)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left of the current scope's deadline (<= 0: passed), None outside a scope."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
