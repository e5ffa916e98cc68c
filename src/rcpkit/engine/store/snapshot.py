"""One consistent read for a whole retrieve (§7.7.1): version check and reads in one snapshot.

A pinned retrieve checks ``floor <= version <= latest`` and then reads at that
version. Done in separate statements, another process's ``collect`` can commit
in between, raise the floor past the version and delete rows the reads then
miss: the answer is neither that snapshot nor an error. A store that offers
``snapshot()`` runs the check and every read of the request in one database
snapshot (PostgreSQL: one ``REPEATABLE READ`` transaction; SQLite: one read
transaction on the file and the in-memory mirror snapshot pinned with it), so a
collect committing meanwhile is invisible to it. A store without it reads as before.

Inside :func:`one_read`, a row is also read from the store once: the stages of
one retrieve (feedback, proximity, duplicate collapse, the page) ask for
overlapping rows, and within one snapshot a row cannot change, so
:func:`fetch_rows` serves a row read earlier in the same read from memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from rcpkit.engine.store.base import ChunkRow, Store

__all__ = ["Snapshots", "fetch_rows", "one_read", "snapshot"]

_ROWS: ContextVar[dict[int, ChunkRow] | None] = ContextVar("rcpkit_read_rows", default=None)


@runtime_checkable
class Snapshots(Protocol):
    def snapshot(self) -> AbstractContextManager[None]:
        """Until exit, every read on this thread sees one database snapshot."""
        ...


def snapshot(store: object) -> AbstractContextManager[None]:
    return store.snapshot() if isinstance(store, Snapshots) else nullcontext()


@contextmanager
def one_read(store: object) -> Iterator[None]:
    """:func:`snapshot`, and every row :func:`fetch_rows` reads in it read once."""
    with snapshot(store):
        token = _ROWS.set({})
        try:
            yield
        finally:
            _ROWS.reset(token)


def fetch_rows(store: Store, keys: Sequence[int]) -> dict[int, ChunkRow]:
    """``store.fetch(keys)``; inside :func:`one_read`, each row from the store once."""
    read = _ROWS.get()
    if read is None:
        return store.fetch(keys)
    missing = [key for key in keys if key not in read]
    if missing:
        read.update(store.fetch(missing))
    return {key: read[key] for key in keys if key in read}
