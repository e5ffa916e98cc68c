"""The PostgreSQL store's BM25 read side: the embedded store's in-memory mirror, fed by SQL.

Why a per-process cache and not BM25 in SQL: the SQL statement (``_pg_lexical``)
scores every posting of every query term — at 100k chunks a Zipf query's
head terms hold most rows — and SQL offers no MaxScore / block-max cutoff
that stays exact with per-tenant, per-version statistics. The mirror
(``_mirror``, ``_postings``) prunes exactly and is what the embedded store
ranks with, so both stores rank with one implementation.

Servers stay stateless: the mirror holds only committed, versioned rows
(``added``/``removed`` per row), is rebuilt from the database on first use and
follows it — whichever server committed — by the ``versions`` row: a read that
resolved a version the mirror has not seen first brings it up to date, in one
REPEATABLE READ transaction (one snapshot). Keys only grow with versions:
commits draw them from the sequence while holding the ``versions`` row
(``PostgresStore._transaction``), so the rows added since are the keys past the
last one mirrored.

The analysed title and body are not stored in PostgreSQL; each row's postings
(term, title tf, body tf) are turned back into token strings, which give the
same weighted counts and the same ``|D|`` (``_postings.analysed_rows``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rcpkit.engine.index._mirror import Reading
from rcpkit.engine.store import deadline
from rcpkit.engine.store.postgres.errors import psycopg
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["PostgresSource"]

_CHUNKS = (
    "SELECT key, tenant, added, coalesce(removed, 0), filter_meta::text FROM chunks"
    " WHERE key > %s ORDER BY key LIMIT %s"
)
# Per chunk its terms as text: each term once per hit, title and body apart.
_TERMS = (
    "SELECT key, string_agg(repeat(term || ' ', title_tf), ''),"
    " string_agg(repeat(term || ' ', body_tf), '') FROM postings"
    " WHERE key >= %s AND key <= %s GROUP BY key"
)


class PostgresSource:
    """The database behind a ``PostgresStore``; ``pool`` lends it connections of its own.

    Never the request thread's connection: that one may be inside a pinned
    REPEATABLE READ transaction, and the mirror must follow the latest commit.
    """

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def marks(self) -> tuple[int, int]:
        with self._pool.connection() as connection:
            return _marks(connection)

    @contextmanager
    def reading(self) -> Iterator[Reading]:
        """One REPEATABLE READ snapshot; its lock waits end with the request's deadline.

        §13.1: a follow waiting on a lock past the deadline stops (``lock_timeout``)
        and the request is -32014. Its reads are not cut otherwise: a first load
        cut at every request's deadline would never finish, and once its first
        statements hold their tables' locks the rest waits on nothing.
        """
        with (
            lock_wait_exceeded(),
            self._pool.connection() as connection,
            connection.transaction(),
        ):
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            left = deadline.remaining()
            if left is not None:
                if left <= 0:
                    raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
                milliseconds = str(max(1, math.ceil(left * 1000)))
                connection.execute("SELECT set_config('lock_timeout', %s, true)", (milliseconds,))
            yield _PostgresReading(connection)


class _PostgresReading:
    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def marks(self) -> tuple[int, int]:
        return _marks(self._connection)

    def count(self) -> int:
        return int(self._connection.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def rows(self, after: int, limit: int, vectors: bool) -> list[tuple[Any, ...]]:
        if vectors:
            raise ValueError("the PostgreSQL store's vectors stay in pgvector")
        chunks = self._connection.execute(_CHUNKS, (after, limit)).fetchall()
        if not chunks:
            return []
        terms = {
            int(key): (title or "", body or "")
            for key, title, body in self._connection.execute(_TERMS, (chunks[0][0], chunks[-1][0]))
        }
        return [
            (*chunk, *terms.get(int(chunk[0]), ("", "")), None)  # a chunk without tokens
            for chunk in chunks
        ]

    def vectors(self, last: int) -> Iterator[tuple[int, bytes]]:
        raise ValueError("the PostgreSQL store's vectors stay in pgvector")

    def retired(self, since: int, last: int) -> list[tuple[int, int]]:
        rows = self._connection.execute(
            "SELECT key, removed FROM chunks WHERE removed > %s AND key <= %s", (since, last)
        ).fetchall()
        return [(int(key), int(removed)) for key, removed in rows]

    def live(self, last: int) -> list[int]:
        rows = self._connection.execute(
            "SELECT key FROM chunks WHERE removed IS NULL AND key <= %s", (last,)
        ).fetchall()
        return [int(row[0]) for row in rows]


@contextmanager
def lock_wait_exceeded() -> Iterator[None]:
    """A lock wait cut by the deadline's ``lock_timeout``: -32014 (§13.1)."""
    try:
        yield
    except psycopg().errors.LockNotAvailable:
        raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True) from None


def _marks(connection: Any) -> tuple[int, int]:
    version, floor = connection.execute("SELECT version, floor FROM versions").fetchone()
    return int(version), int(floor)
