"""One private PostgreSQL + pgvector for the whole test session, a fresh database per test.

Started on first use (so a run that selects no Postgres test never starts it)
and stopped by the session fixture in ``conftest``. When it cannot start, the
tests that need it skip locally and fail in CI (``CI`` set), so CI never
silently loses them.
"""

from __future__ import annotations

import itertools
import os
import threading

import psycopg
import pytest

from rcpkit.engine.store.postgres.pgserver import PostgresServer, start_server

__all__ = ["drop_database", "fresh_database", "own_server", "server", "stop_server"]

TEMPLATE = "rcpkit_template"
_lock = threading.Lock()
_server: PostgresServer | None = None
_failure: str | None = None
_names = itertools.count()


def server() -> PostgresServer:
    """The session's server, started on first call."""
    global _server, _failure
    with _lock:
        if _server is None and _failure is None:
            try:
                _server = start_server()
                with psycopg.connect(_server.url(), autocommit=True) as connection:
                    connection.execute(f"CREATE DATABASE {TEMPLATE}")
                with psycopg.connect(_server.url(TEMPLATE), autocommit=True) as connection:
                    connection.execute("CREATE EXTENSION vector")
            except Exception as error:
                _failure = f"PostgreSQL could not start: {error}"
        if _server is None:
            _unavailable(_failure or "PostgreSQL could not start")
            raise AssertionError("unreachable")
        return _server


def own_server(*, durable: bool = False) -> PostgresServer:
    """A new server of the test's own (a restart or a base backup must not touch the
    session's), skipped like `server` when PostgreSQL cannot start here.

    ``durable``: fsync and synchronous commits on, for a test that crashes, kills or
    restarts the server and counts what it lost (issue 48)."""
    try:
        return start_server(durable=durable)
    except Exception as error:
        _unavailable(f"PostgreSQL could not start: {error}")
        raise


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def fresh_database() -> str:
    """A new, empty database (pgvector installed) and its URL."""
    running = server()
    name = f"test_{os.getpid()}_{next(_names)}"
    with psycopg.connect(running.url(), autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    return running.url(name)


def drop_database(url: str) -> None:
    """Drop a test's database (its connections, if any are left, are ended)."""
    if _server is None:
        return
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_server.url(), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def stop_server() -> None:
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
