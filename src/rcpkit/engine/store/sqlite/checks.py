"""Whether a file is an rcpkit index, decided before anything writes to it (issue 52).

A zero-length ``index.sqlite3`` was opened as a new, empty index: ``query`` and
``stats`` answered "0 hits" with exit 0 and the store wrote a fresh schema into
the file. So before the store's own connection (whose ``journal_mode = WAL``
alone converts another application's database) the file is read, never
written, by a ``query_only`` connection: SQLite's header, ``PRAGMA
quick_check`` (a truncated or bit-flipped file fails it) and rcpkit's tables.
That connection writes no page; in WAL mode its ``-wal``/``-shm`` files go
again when it closes, as any reader's do.

Only an index being created may be a file without an index in it yet: absent,
zero-length (what ``sqlite3.connect`` leaves until the first write) or a
SQLite database with no table at all (what a creator racing this one leaves
until its schema commits). A file with anything else in it is never taken.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["NotAnIndex", "check_index_file"]

_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database
_TABLES = frozenset({"settings", "documents", "chunks"})  # what every rcpkit layout holds
_WAY_OUT = "restore it from a backup (`rcpkit backup`), or move it away and re-index"


class NotAnIndex(ValueError):
    """The file is not an rcpkit index (or is a damaged one); nothing was written to it."""


def check_index_file(path: Path, *, create: bool) -> None:
    """Raise :class:`NotAnIndex` unless ``path`` is an rcpkit index (or, when
    ``create``, a file an index may be created in). Reads only."""
    if not path.exists():
        if not create:
            raise NotAnIndex(f"no index at {path.parent} ({path.name} is missing)")
        return
    if not path.is_file():
        raise NotAnIndex(f"{path} is not a file, so not an rcpkit index")
    with path.open("rb") as file:
        head = file.read(len(_MAGIC))
    if not head:
        if create:
            return
        raise NotAnIndex(f"{path} is empty (0 bytes), not an rcpkit index: {_WAY_OUT}")
    if head != _MAGIC:
        raise NotAnIndex(f"{path} is not an rcpkit index (not a SQLite database): {_WAY_OUT}")
    tables = _read_tables(path)
    if not tables and create:
        return
    if not tables >= _TABLES:
        what = "holds no table" if not tables else "is another application's SQLite database"
        raise NotAnIndex(f"{path} {what}, not an rcpkit index: {_WAY_OUT}")


def _read_tables(path: Path) -> set[str]:
    """The tables of a database that passes ``quick_check``; read without writing."""
    try:
        connection = sqlite3.connect(path, isolation_level=None, timeout=30)
    except sqlite3.Error as error:
        raise NotAnIndex(f"{path} cannot be opened ({error}): {_WAY_OUT}") from None
    try:
        connection.execute("PRAGMA query_only = ON")
        verdict = [str(row[0]) for row in connection.execute("PRAGMA quick_check")]
        names = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {str(name) for (name,) in names}
    except sqlite3.Error as error:
        raise NotAnIndex(f"{path} is damaged ({error}): {_WAY_OUT}") from None
    finally:
        connection.close()
    if verdict != ["ok"]:
        raise NotAnIndex(f"{path} is damaged ({_first_problem(verdict)}): {_WAY_OUT}")
    return tables


def _first_problem(verdict: list[str]) -> str:
    """quick_check's first finding on one line (it starts with a ``*** in database``)."""
    lines = [line for row in verdict for line in row.splitlines() if not line.startswith("***")]
    return lines[0] if lines else "quick_check failed"
