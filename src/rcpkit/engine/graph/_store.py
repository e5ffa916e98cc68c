"""The graph's system of record: one SQLite file, one transaction per write call.

Reads and writes share one connection behind a lock: graph queries run on an
in-memory snapshot (see _snapshot), so the file is read once per version.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rcpkit.engine.graph._schema import SCHEMA, SCHEMA_VERSION
from rcpkit.engine.graph._types import Extraction
from rcpkit.engine.graph._writes import delete_chunks, insert_chunks

__all__ = ["CommunityRow", "GraphStore"]

# (id, level, rank, parent, title, summary, size,
#  sentences [(chunk key, sentence index, text)], members [(eid, centrality)])
CommunityRow = tuple[
    str, int, int, str | None, str, str, int, list[tuple[int, int, str]], list[tuple[int, float]]
]


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
                _set(connection, name, value)
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
            return _bump(connection)

    def delete_chunks(self, keys: Sequence[int]) -> int:
        """Delete chunks atomically; the number that existed (0 leaves the version alone)."""
        with self.transaction() as connection:
            removed = delete_chunks(connection, keys)
            if removed:
                _bump(connection)
            return removed

    def put_entity_vectors(self, rows: Sequence[tuple[int, bytes]], dimension: int) -> None:
        """Cache name vectors; a different dimension than before drops every cached vector."""
        with self.transaction() as connection:
            _check_dimension(connection, dimension)
            connection.executemany(
                "UPDATE entities SET vector = ? WHERE eid = ?", [(blob, eid) for eid, blob in rows]
            )

    def put_community_vectors(self, rows: Sequence[tuple[str, bytes]], dimension: int) -> None:
        """Cache summary vectors, under the same dimension rule as entity vectors."""
        with self.transaction() as connection:
            _check_dimension(connection, dimension)
            connection.executemany(
                "UPDATE communities SET vector = ? WHERE id = ?",
                [(blob, cid) for cid, blob in rows],
            )

    def save_communities(self, rows: Sequence[CommunityRow], version: int) -> None:
        """Replace every community with `rows`, computed from graph `version`."""
        with self.transaction() as connection:
            connection.execute("DELETE FROM communities")
            connection.execute("DELETE FROM community_members")
            connection.executemany(
                "INSERT INTO communities (id, level, rank, parent, title, summary, size, sentences)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(r[0], r[1], r[2], r[3], r[4], r[5], r[6], json.dumps(r[7])) for r in rows],
            )
            connection.executemany(
                "INSERT INTO community_members (community, eid, centrality) VALUES (?, ?, ?)",
                [(row[0], eid, centrality) for row in rows for eid, centrality in row[8]],
            )
            _set(connection, "communities.version", str(version))

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _get(connection: sqlite3.Connection, name: str) -> str | None:
    row = connection.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def _set(connection: sqlite3.Connection, name: str, value: str) -> None:
    connection.execute(
        "INSERT INTO settings (name, value) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (name, value),
    )


def _check_dimension(connection: sqlite3.Connection, dimension: int) -> None:
    if _get(connection, "vectors.dimension") != str(dimension):
        connection.execute("UPDATE entities SET vector = NULL")
        connection.execute("UPDATE communities SET vector = NULL")
        _set(connection, "vectors.dimension", str(dimension))


def _bump(connection: sqlite3.Connection) -> int:
    version = int(_get(connection, "graph.version") or 0) + 1
    _set(connection, "graph.version", str(version))
    return version
