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
from rcpkit.engine.graph._types import Extraction
from rcpkit.engine.graph._writes import (
    CommunityRow,
    bump_version,
    delete_chunks,
    insert_chunks,
    put_community_vectors,
    put_entity_vectors,
    replace_communities,
    set_setting,
)

__all__ = ["CommunityRow", "GraphStore"]


class GraphStore:
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
        self._bind("schema.version", SCHEMA_VERSION, "schema")
        self._bind("extractor.identity", extractor_identity, "extractor")

    def _bind(self, name: str, value: str, what: str) -> None:
        recorded = self.setting(name)
        if recorded is None:
            with self.transaction() as connection:
                set_setting(connection, name, value)
        elif recorded != value:
            raise ValueError(f"graph {self.path} was built with {what} {recorded}, not {value}")

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

    def setting(self, name: str) -> str | None:
        rows = self.read("SELECT value FROM settings WHERE name = ?", (name,))
        return str(rows[0][0]) if rows else None

    @property
    def version(self) -> int:
        """Bumped by every write that changed the graph."""
        return int(self.setting("graph.version") or 0)

    @property
    def communities_version(self) -> int:
        """The graph version the stored communities were computed from (-1: never)."""
        return int(self.setting("communities.version") or -1)

    # --- writes ---

    def write_chunks(
        self, chunks: Sequence[tuple[int, str, str]], extractions: Sequence[Extraction]
    ) -> int:
        """Upsert chunks with their extractions atomically; the new graph version."""
        with self.transaction() as connection:
            insert_chunks(connection, chunks, extractions)
            return bump_version(connection)

    def delete_chunks(self, keys: Sequence[int]) -> int:
        """Delete chunks atomically; the number that existed (0 leaves the version alone)."""
        with self.transaction() as connection:
            removed = delete_chunks(connection, keys)
            if removed:
                bump_version(connection)
            return removed

    def put_entity_vectors(self, rows: Sequence[tuple[int, bytes]], dimension: int) -> None:
        """Cache name vectors; a different dimension than before drops every cached vector."""
        with self.transaction() as connection:
            put_entity_vectors(connection, rows, dimension)

    def put_community_vectors(self, rows: Sequence[tuple[str, bytes]], dimension: int) -> None:
        """Cache summary vectors, under the same dimension rule as entity vectors."""
        with self.transaction() as connection:
            put_community_vectors(connection, rows, dimension)

    def save_communities(self, rows: Sequence[CommunityRow], version: int) -> None:
        """Replace every community with `rows`, computed from graph `version`."""
        with self.transaction() as connection:
            replace_communities(connection, rows, version)

    def close(self) -> None:
        with self._lock:
            self._connection.close()
