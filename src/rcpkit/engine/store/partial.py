"""A read answered without part of the store: what was left out, collected per request.

A SolrCloud collection with a shard down (``store.solr``, ``shards.tolerant``)
answers a read from the shards it can reach. It reports each shard it
left out here; the retrieve entry point opens a :func:`partial_scope` and puts
what was left out in the result (``_meta.degraded`` and ``usage.notes``), so the
caller can tell a thin answer from a complete one (§16.2). Outside a scope
(writes, admin reads) nothing may be left out: the store raises instead.

A context variable, like the request's deadline (``store.deadline``): per
thread and per task, and carried to the recall pool's threads with the context.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["LeftOut", "leave_out", "partial_scope", "tolerated"]


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A part of the store a read could not reach: its name and the error it gave."""

    part: str
    code: int
    message: str

    def to_wire(self) -> dict[str, object]:
        return {"shard": self.part, "code": self.code, "message": self.message}

    def note(self) -> str:
        return f"shard '{self.part}' left out: [{self.code}] {self.message}"


_LEFT_OUT: ContextVar[list[LeftOut] | None] = ContextVar("rcpkit_store_left_out", default=None)
# A request's shards are read at once on several threads: one list, appended under this.
_APPENDING = threading.Lock()


@contextmanager
def partial_scope() -> Iterator[list[LeftOut]]:
    """Reads made inside may leave out unreachable parts; the list says which."""
    left: list[LeftOut] = []
    token = _LEFT_OUT.set(left)
    try:
        yield left
    finally:
        _LEFT_OUT.reset(token)


def tolerated() -> bool:
    """Whether the current read may be answered without part of the store."""
    return _LEFT_OUT.get() is not None


def leave_out(part: LeftOut) -> bool:
    """Record that the current read was answered without ``part``; whether it is new.

    Once per part and request, however many of the request's reads skipped it.
    """
    left = _LEFT_OUT.get()
    if left is None:
        return False
    with _APPENDING:
        if _holds(left, part.part):
            return False
        left.append(part)
    return True


def _holds(left: list[LeftOut], part: str) -> bool:
    return any(known.part == part for known in left)
