"""The embedded store's rows as the query index reads them (a ``Source``, ``index._mirror``).

The mirror follows the file by its ``version`` and ``floor`` settings: in one
read transaction (one WAL snapshot) it reads the rows added past the last key it
holds and the rows retired since the version it holds. The analysed title and
body come from FTS5's content table (columns c0, c1 keyed by the rowid), a plain
table: a join through the virtual table costs a cursor per row.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from rcpkit.engine.index._mirror import Reading

__all__ = ["SQLiteSource"]


class SQLiteSource:
    """A SQLite file; ``reader()`` gives the calling thread's connection."""

    def __init__(self, reader: Callable[[], sqlite3.Connection]) -> None:
        self._reader = reader

    def marks(self) -> tuple[int, int]:
        return _marks(self._reader())

    @contextlib.contextmanager
    def reading(self) -> Iterator[Reading]:
        connection = self._reader()
        connection.execute("BEGIN")  # one WAL snapshot
        try:
            yield _SQLiteReading(connection)
        finally:
            connection.execute("COMMIT")


class _SQLiteReading:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def marks(self) -> tuple[int, int]:
        return _marks(self._connection)

    def count(self) -> int:
        return int(self._connection.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def rows(self, after: int, limit: int, vectors: bool) -> list[tuple[Any, ...]]:
        sql = _ROWS.format(vector="c.vector" if vectors else "NULL")
        return self._connection.execute(sql, (after, limit)).fetchall()

    def vectors(self, last: int) -> Iterator[tuple[int, bytes]]:
        cursor = self._connection.execute(_VECTORS, (last,))
        try:
            yield from cursor
        finally:
            cursor.close()  # a load cut short: the read transaction then ends cleanly

    def retired(self, since: int, last: int) -> list[tuple[int, int]]:
        return self._connection.execute(
            "SELECT key, removed FROM chunks WHERE removed > ? AND key <= ?", (since, last)
        ).fetchall()

    def live(self, last: int) -> list[int]:
        # The live rows' partial index holds every key: no 1.5 KB vector row is read.
        rows = self._connection.execute(
            "SELECT key FROM chunks INDEXED BY live_chunks WHERE removed IS NULL AND key <= ?",
            (last,),
        )
        return [int(row[0]) for row in rows]


def _marks(connection: sqlite3.Connection) -> tuple[int, int]:
    found = dict(
        connection.execute(
            "SELECT name, value FROM settings WHERE name IN ('version', 'floor')"
        ).fetchall()
    )
    return int(found.get("version", 0)), int(found.get("floor", 0))


_ROWS = (
    "SELECT c.key, c.tenant, c.added, coalesce(c.removed, 0), c.filter_meta,"
    " f.c0, f.c1, {vector} FROM chunks AS c JOIN chunks_fts_content AS f ON f.id = c.key"
    " WHERE c.key > ? ORDER BY c.key LIMIT ?"
)
_VECTORS = "SELECT key, vector FROM chunks WHERE key <= ? ORDER BY key"
