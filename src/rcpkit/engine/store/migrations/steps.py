"""Versioned schema migrations of the PostgreSQL store, run by ``rcpkit db migrate``.

Each step is a file ``NNNN_name.sql`` in this folder, applied in order inside one
transaction and recorded in ``schema_migrations``. A transaction-scoped advisory
lock makes concurrent runs (several servers starting together) safe: the second
waits, then finds nothing left to do. Applied steps are never edited; a change is
a new file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["MIGRATIONS", "LOCK_KEY", "Migration", "applied_version", "migrate"]

LOCK_KEY = 0x72637031  # "rcp1": the advisory lock key every rcpkit process agrees on
_NAME = re.compile(r"(\d{4})_(\w+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def _load() -> tuple[Migration, ...]:
    steps = []
    for entry in resources.files(__package__ or __name__).iterdir():
        found = _NAME.fullmatch(entry.name)
        if found is not None:
            steps.append(Migration(int(found[1]), found[2], entry.read_text(encoding="utf-8")))
    steps.sort(key=lambda step: step.version)
    return tuple(steps)


MIGRATIONS = _load()

_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY,"
    " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
)


def applied_version(connection: Any) -> int:
    """The highest applied step (0: none, or no rcpkit schema at all)."""
    row = connection.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not row[0]:
        return 0
    (version,) = connection.execute(
        "SELECT coalesce(max(version), 0) FROM schema_migrations"
    ).fetchone()
    return int(version)


def migrate(connection: Any) -> tuple[int, list[Migration]]:
    """Apply the missing steps; returns the schema version and the steps applied now."""
    done: list[Migration] = []
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        connection.execute(_TABLE)
        applied = {row[0] for row in connection.execute("SELECT version FROM schema_migrations")}
        for step in MIGRATIONS:
            if step.version in applied:
                continue
            connection.execute(step.sql)
            connection.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (step.version, step.name),
            )
            done.append(step)
    return applied_version(connection), done
