"""The embedded store: one SQLite file (WAL) is the system of record.

``store`` is :class:`SQLiteStore`, built of ``file`` (connections, snapshots,
settings), ``writes`` and ``reads``; ``schema`` is its layout; ``source`` feeds
the query index the rows committed since a version; ``checks`` refuses a file
that is not an rcpkit index before anything is written to it.
"""

from rcpkit.engine.store.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
