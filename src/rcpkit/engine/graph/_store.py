"""The graph's system of record: one SQLite file, one transaction per write call.

Reads and writes share one connection behind a lock: graph queries run on an
in-memory snapshot (see _snapshot), so the file is read once per version.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rcpkit.engine.graph._schema import SCHEMA, SCHEMA_VERSION
from rcpkit.engine.graph.storage import CommunityRow, GraphTables

__all__ = ["CommunityRow", "GraphStore"]


class GraphStore(GraphTables):
    """A graph file bound to one extractor identity (mixing extractors would mix key spaces)."""

    def __init__(self, path: Path | str, extractor_identity: str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        self._connection.execute("PRAGMA journal_mode = WAL")
        self._connection.execute("PRAGMA synchronous = FULL")
        self._connection.executescript(SCHEMA)
        for name, value, what in (
            ("schema.version", SCHEMA_VERSION, "schema"),
            ("extractor.identity", extractor_identity, "extractor"),
        ):
            if self.setting(name) != value:  # absent (recorded now) or another (refused)
                with self.transaction() as connection:
                    self._bind(connection, name, value, what)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` … `COMMIT`, rolled back on any exception."""
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold reads together: every `read` inside sees one committed version."""
        with self._lock:
            if self._connection.in_transaction:
                yield  # already inside a transaction on this connection
                return
            self._connection.execute("BEGIN DEFERRED")
            try:
                yield
            finally:
                self._connection.execute("COMMIT")

    def read(self, query: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """All rows of one read query."""
        with self._lock:
            return self._connection.execute(query, parameters).fetchall()

    def close(self) -> None:
        with self._lock:
            self._connection.close()
