"""The engine state's SQLite files beside an embedded index (feedback, memories)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["connect_state"]


def connect_state(path: Path) -> sqlite3.Connection:
    """A WAL connection to ``path``; a file that is not a SQLite database is an error
    naming it (issue 52: it was a traceback), raised before anything is written."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
    except sqlite3.DatabaseError as error:
        connection.close()
        raise ValueError(
            f"{path} is damaged ({error}): restore it from a backup, or move it away"
            " (the index keeps its documents; this file holds feedback or memories)"
        ) from None
    return connection
