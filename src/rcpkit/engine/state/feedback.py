"""Feedback (§7.16): durable, advisory signals, and the quarantine policy they feed.

Every signal is stored with its query, session and tenant. Signals are data,
never instructions (§15.2): the only effect is the documented policy below.

Quarantine policy (§15.3): a document reported ``poisonSuspected`` or
``injectionSuspected`` from ``quarantine_reports`` distinct sessions of the
same tenant is withheld from that tenant's later retrieves (noted in
``usage.notes``). Reports without a ``sessionId`` are stored but do not count:
one anonymous caller could otherwise repeat itself into a quarantine. Reports
never cross tenants. A retrieve reads the quarantine once, when it starts, so
feedback arriving meanwhile cannot change its result.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rcpkit.engine.state._files import connect_state
from rcpkit.protocol import messages as m

__all__ = ["FeedbackLog", "document_of", "signal_rows"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, tenant TEXT, session_id TEXT, query TEXT,
    hit_id TEXT NOT NULL, doc_id TEXT NOT NULL, used INTEGER, cited INTEGER, helpful INTEGER,
    reward REAL, poison INTEGER, injection INTEGER
);
CREATE INDEX IF NOT EXISTS feedback_reports ON feedback (tenant, doc_id)
    WHERE poison = 1 OR injection = 1;
"""


def document_of(hit_id: str) -> str:
    """The document a hit id belongs to (``doc#3`` → ``doc``, ``doc#p2`` → ``doc``)."""
    head, separator, _ = hit_id.rpartition("#")
    return head if separator else hit_id


def signal_rows(params: m.FeedbackParams) -> list[tuple[object, ...]]:
    """Per signal: session, query, hit, document, then its flags and reward.

    Flags stay bools (SQLite stores them as 1/0, PostgreSQL as boolean).
    """
    return [
        (
            params.session_id,
            params.query,
            str(s.hit_id),
            document_of(str(s.hit_id)),
            s.used,
            s.cited,
            s.helpful,
            s.reward,
            s.poison_suspected,
            s.injection_suspected,
        )
        for s in params.signals
    ]


class FeedbackLog:
    def __init__(self, path: Path, quarantine_reports: int) -> None:
        self.quarantine_reports = quarantine_reports
        self._lock = threading.Lock()
        self._connection = connect_state(path)
        self._connection.executescript(_SCHEMA)

    def record(self, params: m.FeedbackParams, tenant: str | None) -> int:
        """Store every signal (one transaction); returns how many were recorded."""
        now = time.time()
        rows = [(now, tenant, *row) for row in signal_rows(params)]
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                self._connection.executemany(
                    "INSERT INTO feedback (at, tenant, session_id, query, hit_id, doc_id, used,"
                    " cited, helpful, reward, poison, injection)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")
        return len(rows)

    def quarantined(self, tenant: str | None) -> frozenset[str]:
        """Documents withheld from ``tenant`` by the policy above."""
        rows = self._connection.execute(
            "SELECT doc_id FROM feedback WHERE tenant IS ? AND (poison = 1 OR injection = 1)"
            " AND session_id IS NOT NULL GROUP BY doc_id"
            " HAVING count(DISTINCT session_id) >= ?",
            (tenant, self.quarantine_reports),
        )
        return frozenset(row[0] for row in rows)

    def count(self, tenant: str | None = None) -> int:
        row = self._connection.execute(
            "SELECT count(*) FROM feedback WHERE tenant IS ?", (tenant,)
        ).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._connection.close()
