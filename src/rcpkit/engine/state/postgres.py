"""The state store in the shared PostgreSQL database (migration 0003), for N stateless servers.

Same contract as the embedded state (``rcpkit.engine.state.base``): the same
tenant scoping (tenant ``''`` is "no tenant", as in the rest of the schema), the
same quarantine policy (§15.3), the same trajectory time-to-live and bounds
(§7.7.3), dated by the database's clock so servers whose clocks disagree agree.
Every statement runs through the store's deadline-bounded connections (§13.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from psycopg.types.json import Jsonb

from rcpkit.engine.state.base import Database, EngineState
from rcpkit.engine.state.feedback import signal_rows
from rcpkit.engine.state.trajectories import MAX_SEEN, MAX_SESSIONS
from rcpkit.engine.store.postgres.errors import unavailable
from rcpkit.protocol import messages as m

__all__ = ["PostgresFeedback", "PostgresMemories", "PostgresTrajectories", "postgres_state"]


def postgres_state(database: Database, quarantine_reports: int, ttl_seconds: int) -> EngineState:
    return EngineState(
        PostgresFeedback(database, quarantine_reports),
        PostgresMemories(database),
        PostgresTrajectories(database, ttl_seconds),
    )


class PostgresFeedback:
    def __init__(self, database: Database, quarantine_reports: int) -> None:
        self._database = database
        self.quarantine_reports = quarantine_reports

    @unavailable()
    def record(self, params: m.FeedbackParams, tenant: str | None) -> int:
        """Store every signal in one transaction; returns how many were recorded."""
        rows = [(tenant or "", *row) for row in signal_rows(params)]
        with self._database.writing() as connection:
            connection.cursor().executemany(
                "INSERT INTO feedback (tenant, session_id, query, hit_id, doc_id, used, cited,"
                " helpful, reward, poison, injection)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                rows,
            )
        return len(rows)

    @unavailable()
    def quarantined(self, tenant: str | None) -> frozenset[str]:
        # §15.3: distinct sessions of the same tenant; anonymous reports do not count.
        with self._database.reading() as connection:
            rows = connection.execute(
                "SELECT doc_id FROM feedback WHERE tenant = %s AND (poison OR injection)"
                " AND session_id IS NOT NULL GROUP BY doc_id"
                " HAVING count(DISTINCT session_id) >= %s",
                (tenant or "", self.quarantine_reports),
            ).fetchall()
        return frozenset(str(row[0]) for row in rows)

    @unavailable()
    def count(self, tenant: str | None = None) -> int:
        with self._database.reading() as connection:
            row = connection.execute(
                "SELECT count(*) FROM feedback WHERE tenant = %s", (tenant or "",)
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        """The store owns the connections."""


class PostgresMemories:
    def __init__(self, database: Database) -> None:
        self._database = database

    @unavailable()
    def save(
        self, memory_id: str, tenant: str | None, scope: str, session_id: str | None, payload: str
    ) -> None:
        with self._database.writing() as connection:
            connection.execute(
                "INSERT INTO memories (memory_id, tenant, scope, session_id, payload)"
                " VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (memory_id) DO UPDATE SET"
                " tenant = excluded.tenant, scope = excluded.scope,"
                " session_id = excluded.session_id, created = excluded.created,"
                " payload = excluded.payload",
                (memory_id, tenant or "", scope, session_id, payload),
            )

    @unavailable()
    def load(self, memory_id: str | None, tenant: str | None) -> str | None:
        with self._database.reading() as connection:
            if memory_id is None:
                row = connection.execute(
                    "SELECT payload::text FROM memories WHERE tenant = %s AND scope = 'global'"
                    " ORDER BY created DESC LIMIT 1",
                    (tenant or "",),
                ).fetchone()
            else:
                row = connection.execute(
                    "SELECT payload::text FROM memories WHERE memory_id = %s AND tenant = %s",
                    (memory_id, tenant or ""),
                ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        """The store owns the connections."""


# An expired trajectory reads as empty and is restarted by the next write to it.
_LIVE = "expires > now()"
_TTL = "now() + make_interval(secs => %(ttl)s)"


class PostgresTrajectories:
    def __init__(self, database: Database, ttl_seconds: int) -> None:
        self._database = database
        self.ttl_seconds = ttl_seconds

    @unavailable()
    def seen(self, tenant: str | None, session_id: str) -> frozenset[str]:
        with self._database.reading() as connection:
            row = connection.execute(
                f"SELECT seen FROM trajectories WHERE tenant = %s AND session_id = %s AND {_LIVE}",
                (tenant or "", session_id),
            ).fetchone()
        return frozenset(row[0]) if row else frozenset()

    @unavailable()
    def record(self, tenant: str | None, session_id: str, hit_ids: Iterable[str]) -> None:
        # The union is computed in the row's lock (ON CONFLICT), so two servers recording
        # the same trajectory at once both land.
        self._upsert(
            tenant,
            session_id,
            "seen",
            list(dict.fromkeys(hit_ids)),
            "CASE WHEN trajectories.expires <= now() THEN excluded.seen"
            " WHEN cardinality(trajectories.seen) >= %(max_seen)s THEN trajectories.seen"
            " ELSE ARRAY(SELECT DISTINCT unnest(trajectories.seen || excluded.seen)) END",
        )

    @unavailable()
    def state(self, tenant: str | None, session_id: str) -> dict[str, object]:
        with self._database.writing() as connection:
            row = connection.execute(
                "UPDATE trajectories SET expires = now() + make_interval(secs => %s)"
                f" WHERE tenant = %s AND session_id = %s AND {_LIVE} RETURNING state",
                (self.ttl_seconds, tenant or "", session_id),
            ).fetchone()
        state: dict[str, object] = dict(row[0]) if row else {}
        return state

    @unavailable()
    def save_state(self, tenant: str | None, session_id: str, state: dict[str, object]) -> None:
        self._upsert(
            tenant,
            session_id,
            "state",
            Jsonb({name: _plain(value) for name, value in state.items()}),
            "excluded.state",
        )

    def _upsert(
        self, tenant: str | None, session_id: str, column: str, value: Any, merged: str
    ) -> None:
        params = {
            "tenant": tenant or "", "session": session_id, "value": value,
            "ttl": self.ttl_seconds, "max_seen": MAX_SEEN, "max_sessions": MAX_SESSIONS,
        }  # fmt: skip
        other = "state" if column == "seen" else "seen"
        cast = "text[]" if column == "seen" else "jsonb"
        reset = f"CASE WHEN trajectories.expires <= now() THEN excluded.{other}"
        with self._database.writing() as connection:
            (inserted,) = connection.execute(
                f"INSERT INTO trajectories (tenant, session_id, expires, {column})"
                f" VALUES (%(tenant)s, %(session)s, {_TTL}, %(value)s::{cast})"
                f" ON CONFLICT (tenant, session_id) DO UPDATE SET {column} = {merged},"
                f" {other} = {reset} ELSE trajectories.{other} END,"
                " expires = excluded.expires RETURNING xmax = 0",
                params,
            ).fetchone()
            if inserted:  # a new trajectory: drop the expired, then the oldest beyond the bound
                connection.execute("DELETE FROM trajectories WHERE expires <= now()")
                connection.execute(
                    "DELETE FROM trajectories WHERE ctid IN (SELECT ctid FROM trajectories"
                    " ORDER BY expires OFFSET %(max_sessions)s)",
                    params,
                )


def _plain(value: object) -> object:
    """JSON for a state value: sets and tuples become sorted lists / lists."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if isinstance(value, tuple):
        return list(value)
    return value
