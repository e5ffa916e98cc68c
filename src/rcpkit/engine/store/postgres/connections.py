"""A PostgreSQL store's connections: a checked pool, this thread's connection, and
statements bounded by the request's deadline (§13.1).

:class:`Connections` is the part of ``PostgresStore`` every read and write goes
through (``writes``, ``reads``); the settings table is read and written here too,
since opening the store needs it before anything else.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rcpkit.engine.store import deadline, migrations
from rcpkit.engine.store.postgres.errors import deadline_exceeded, psycopg, unavailable
from rcpkit.engine.store.tenant_versions import Dialect
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["DIALECT", "Connections", "bound_by_deadline", "connect", "open_pool"]

DIALECT = Dialect("%s")


def connect(url: str) -> Any:
    """An autocommit connection (psycopg's errors become ValueError for the CLI)."""
    driver = psycopg()
    try:
        return driver.connect(url, autocommit=True)
    except driver.Error as error:
        raise ValueError(f"cannot connect to the store: {error}") from None


class Connections:
    """A pool of checked connections, one per thread at a time, and the settings table.

    Connections come from a ``psycopg_pool`` pool that checks each one as it is
    handed out: after a database restart a request in flight then fails
    (``-32010``), and every later one gets a fresh connection instead of the
    dead one it would otherwise have found (issue 20). A request waiting for a
    connection waits at most its deadline (else ``pool_timeout``), then ``-32010``.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool,
        pool_size: int,
        pool_timeout: float,
        prepared_statements: bool,
    ) -> None:
        self.url = url
        self.pool_timeout = pool_timeout
        self._local = threading.local()
        self._write_lock = threading.Lock()
        with connect(url) as first:  # refused: ValueError, for the CLI
            self.read_only = bool(first.execute("SELECT pg_is_in_recovery()").fetchone()[0])
            latest = migrations.MIGRATIONS[-1].version
            applied = migrations.applied_version(first)
            if applied < latest and migrate and not self.read_only:
                applied, _ = migrations.migrate(first)
        if applied != latest:
            raise ValueError(
                f"the database holds rcpkit schema {applied}, this rcpkit needs {latest}; "
                "run `rcpkit db migrate --store URL`"
            )
        self._pool = open_pool(url, pool_size, prepared_statements)
        # A store dropped without close() (an engine a caller forgot) closes its pool.
        weakref.finalize(self, self._pool.close)

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """This thread's connection: the one it already holds, else one from the pool.

        Nested uses on one thread share one connection, so a transaction opened
        by an outer use (a deadline, a pinned read) covers the inner statements.
        """
        held = getattr(self._local, "connection", None)
        if held is not None:
            yield held
            return
        left = deadline.remaining()
        if left is not None and left <= 0:
            raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
        wait = self.pool_timeout if left is None else min(left, self.pool_timeout)
        with self._borrowed(wait, left is not None and left <= self.pool_timeout) as connection:
            self._local.connection = connection
            try:
                yield connection
            finally:
                self._local.connection = None

    @contextmanager
    def _borrowed(self, wait: float, by_deadline: bool) -> Iterator[Any]:
        """A pool connection; waiting out the request's deadline for one is -32014 (§13.1)."""
        from psycopg_pool import PoolTimeout

        try:
            connection = self._pool.getconn(timeout=wait)
        except PoolTimeout:
            if by_deadline:
                raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True) from None
            raise
        try:
            yield connection
        finally:
            self._pool.putconn(connection)  # a broken one is replaced, an open transaction ends

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """This thread's connection, its statements bounded by the request's deadline.

        §13.1: past the deadline the request is answered -32014 and its work must
        stop, SQL included. Under a :func:`deadline.deadline_scope` the statements
        run in one transaction with ``SET LOCAL statement_timeout`` of the time
        left; PostgreSQL cancels one still running then, which is -32014 here too.
        """
        with self.connection() as connection:
            if deadline.remaining() is None:
                yield connection
                return
            with deadline_exceeded(), connection.transaction():
                bound_by_deadline(connection)
                yield connection

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read on this thread until exit sees one snapshot (see ``store.snapshot``).

        Nested in another snapshot (a rewrite's inner retrieve) it is that one.
        """
        with unavailable(), self.connection() as connection:
            if connection.info.transaction_status != psycopg().pq.TransactionStatus.IDLE:
                yield
                return
            with connection.transaction():
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                yield

    @contextmanager
    def writing(self) -> Iterator[Any]:
        """A write transaction on this thread's connection, bounded by the request's deadline.

        For writes that need no version (the engine state: feedback, memories,
        trajectories). §13.1: past the deadline the transaction is cancelled and
        rolled back, so nothing of it is written, and the request is -32014.
        """
        with self.connection() as connection, deadline_exceeded(), connection.transaction():
            bound_by_deadline(connection)
            yield connection

    @unavailable()
    def _one(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> Any:
        with self.reading() as connection:
            row = connection.execute(sql, params).fetchone()
        return None if row is None else row[0]

    @unavailable()
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self.reading() as connection:
            return list(connection.execute(sql, params).fetchall())

    @property
    def version(self) -> int:
        """The last committed version, read from the database (another process may commit)."""
        return int(self._one("SELECT version FROM versions"))

    @property
    def floor(self) -> int:
        return int(self._one("SELECT floor FROM versions"))

    def setting(self, name: str) -> str | None:
        value = self._one("SELECT value FROM settings WHERE name = %s", (name,))
        return None if value is None else str(value)

    @unavailable()
    def set_setting(self, name: str, value: str) -> None:
        with self.connection() as connection:
            connection.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )

    @unavailable()
    def setting_default(self, name: str, value: str) -> str:
        existing = self.setting(name)
        if existing is not None or self.read_only:
            return existing or value
        # A connection of its own, outside any snapshot this thread holds: in a
        # REPEATABLE READ snapshot the insert fails to serialise when another
        # request set the name first, and the snapshot would not see its value.
        with self._borrowed(self.pool_timeout, by_deadline=False) as connection:
            connection.execute(
                "INSERT INTO settings (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (name, value),
            )
            row = connection.execute("SELECT value FROM settings WHERE name = %s", (name,))
            agreed = row.fetchone()
        return value if agreed is None else str(agreed[0])


def bound_by_deadline(connection: Any) -> None:
    """``SET LOCAL statement_timeout`` to the time the request's deadline leaves, if any."""
    left = deadline.remaining()
    if left is None:
        return
    if left <= 0:
        raise RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
    milliseconds = str(max(1, math.ceil(left * 1000)))
    connection.execute("SELECT set_config('statement_timeout', %s, true)", (milliseconds,))


def open_pool(url: str, size: int, prepared_statements: bool = True) -> Any:
    """A pool of autocommit connections, each checked (``SELECT ''``) as it is handed out.

    Without ``prepared_statements`` nothing is prepared server-side
    (``prepare_threshold=None``): a transaction-mode pooler that cannot track
    them (pgbouncer < 1.21, or without ``max_prepared_statements``) hands each
    transaction another server connection, where a prepared name is unknown.
    """
    kwargs: dict[str, Any] = {"autocommit": True}
    if not prepared_statements:
        kwargs["prepare_threshold"] = None
    try:
        from psycopg_pool import ConnectionPool
    except ImportError as error:
        raise RuntimeError("install rcpkit[postgres] to use a postgres:// store") from error
    return ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, size),
        kwargs=kwargs,
        check=ConnectionPool.check_connection,
        open=True,
        name="rcpkit",
    )
