"""The embedded store's file: its connections, the snapshot a thread reads, settings.

One writer connection takes every write (``BEGIN IMMEDIATE``, under a lock);
each reading thread has a connection of its own. :class:`SQLiteFile` is the part
of ``SQLiteStore`` its ``writes`` and ``reads`` go through.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcpkit.engine.index import SnapshotRead
from rcpkit.engine.index._mirror import Mirror, Snapshot
from rcpkit.engine.store.tenant_versions import Dialect
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["DIALECT", "Pinned", "SQLiteFile", "groups", "stored_floor", "stored_version"]

_IN_BATCH = 500  # bound on `IN (?, …)` parameters per statement
DIALECT = Dialect("?")
PAGE_SIZE = 16384


class SQLiteFile:
    """One SQLite file in WAL mode: a writer connection and one reader per thread."""

    path: Path
    _write_lock: threading.Lock
    _local: threading.local
    _writer: sqlite3.Connection
    _mirror: Mirror

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        # A new file's pages (ignored for an existing one): a chunk row is ~2 KB (its
        # 1.5 KB vector), two to a 4 KB page left 340 B a chunk unused (issue 51.5).
        connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        return connection

    @property
    def _reader(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        return connection

    @property
    def version(self) -> int:
        """The last committed index version, whichever process committed it (issue 14)."""
        return self._synced().version

    def _synced(self) -> Snapshot:
        """The mirror snapshot this thread reads: its pinned one, else the latest."""
        pinned: Pinned | None = getattr(self._local, "pinned", None)
        return self._mirror.sync() if pinned is None else pinned.mirror

    def _reading(self, mirror: Mirror, version: int | None) -> SnapshotRead:
        """What the query index reads on this thread: its pinned snapshot, else the latest."""
        return SnapshotRead(self._synced(), version)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read on this thread until exit sees one snapshot (see ``store.snapshot``).

        Two things are read: the in-memory mirror (BM25, filters, vectors) and the
        file (chunk text, SPLADE, the floor). The mirror snapshot published last is
        pinned with the dense state published with it, then one read transaction
        opens on this thread's connection (its WAL snapshot starts at its first
        read, the floor). The mirror serves every version from its floor to its
        version (a reload after garbage collection drops only rows retired at or
        below its floor), the file every version from the floor it read: the
        versions servable are the floor read to the mirror's version. Should a
        collect between the two have raised the floor past the mirror's version,
        both are taken again. Nested in another snapshot, it is that one.
        """
        if getattr(self._local, "pinned", None) is not None:
            yield
            return
        connection = self._reader
        for _ in range(3):
            self._mirror.sync()
            mirror, dense = self._mirror.pinned()
            connection.execute("BEGIN")
            try:
                floor = stored_floor(connection)  # the transaction's WAL snapshot starts here
            except BaseException:
                connection.execute("COMMIT")
                raise
            if floor <= mirror.version:
                break
            connection.execute("COMMIT")
        else:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "the index was collected while this request read it; retry",
                retryable=True,
            )
        self._local.pinned = Pinned(mirror, max(floor, mirror.floor))
        try:
            index = self._mirror.dense
            if index is None or dense is None:
                yield
            else:
                with index.pinned(dense):
                    yield
        finally:
            self._local.pinned = None
            connection.execute("COMMIT")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            connection = self._writer
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    @property
    def floor(self) -> int:
        """The oldest version still servable; older ones were garbage-collected."""
        pinned: Pinned | None = getattr(self._local, "pinned", None)
        if pinned is not None:
            return pinned.floor
        return int(self.setting("floor") or 0)

    def setting(self, name: str) -> str | None:
        row = self._writer.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])

    def setting_default(self, name: str, value: str) -> str:
        existing = self.setting(name)
        if existing is not None:  # the common case writes nothing
            return existing
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR IGNORE INTO settings (name, value) VALUES (?, ?)", (name, value)
            )
        return self.setting(name) or value

    def set_setting(self, name: str, value: str) -> None:
        with self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (name, value)
            )


@dataclass(frozen=True, slots=True)
class Pinned:
    """A thread's one snapshot: the mirror it reads and the floor its read transaction saw."""

    mirror: Snapshot
    floor: int


def stored_floor(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT value FROM settings WHERE name = 'floor'").fetchone()
    return 0 if row is None else int(row[0])


def stored_version(connection: sqlite3.Connection) -> int:
    row = connection.execute("SELECT value FROM settings WHERE name = 'version'").fetchone()
    return 0 if row is None else int(row[0])


def groups(items: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), _IN_BATCH):
        yield list(items[start : start + _IN_BATCH])
