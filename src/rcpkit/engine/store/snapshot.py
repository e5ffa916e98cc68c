"""One consistent read for a whole retrieve (§7.7.1): version check and reads in one snapshot.

A pinned retrieve checks ``floor <= version <= latest`` and then reads at that
version. Done in separate statements, another process's ``collect`` can commit
in between, raise the floor past the version and delete rows the reads then
miss: the answer is neither that snapshot nor an error. A store that offers
``snapshot()`` runs the check and every read of the request in one database
snapshot (PostgreSQL: one ``REPEATABLE READ`` transaction; SQLite: one read
transaction on the file and the in-memory mirror snapshot pinned with it), so a
collect committing meanwhile is invisible to it. A store without it reads as before.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Protocol, runtime_checkable

__all__ = ["Snapshots", "snapshot"]


@runtime_checkable
class Snapshots(Protocol):
    def snapshot(self) -> AbstractContextManager[None]:
        """Until exit, every read on this thread sees one database snapshot."""
        ...


def snapshot(store: object) -> AbstractContextManager[None]:
    return store.snapshot() if isinstance(store, Snapshots) else nullcontext()
