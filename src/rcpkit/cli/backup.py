"""``rcpkit backup DEST``: a consistent copy of an index, safe while a server writes to it.

SQLite's online backup API copies pages from one read transaction, so the copy is
one committed version even when ``rcpkit serve`` or ``rcpkit index`` commits during
it. DEST is a folder that becomes a complete index: ``--index DEST`` serves it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import time
from pathlib import Path

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "copy an index consistently while it is served (SQLite online backup)"

_FILES = ("index.sqlite3", "feedback.sqlite3", "memory.sqlite3")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dest", type=Path, help="a new (or empty) folder for the copy")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import require_index
    from rcpkit.engine.config import load_config
    from rcpkit.engine.open import in_databases
    from rcpkit.engine.store.sqlite.checks import check_index_file

    config = load_config(args.config, index=args.index, store=args.store)
    if in_databases(config.store):
        raise ValueError("a PostgreSQL store is backed up with pg_dump, not rcpkit backup")
    require_index(config)
    dest: Path = args.dest
    _refuse_inside(dest, config.index)
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} is not empty: back up into a new or empty folder")
    # Issue 52: a damaged index is refused before the copy writes anything.
    check_index_file(config.index / "index.sqlite3", create=False)
    started = time.perf_counter()
    _copy_into(config.index, dest)
    version = _version(dest / "index.sqlite3")
    seconds = time.perf_counter() - started
    print(f"backed up {config.index} at version {version} to {dest} in {seconds:.1f} s")
    return 0


def _refuse_inside(dest: Path, index: Path) -> None:
    """Issue 52: a copy inside the folder it copies is no backup (it goes with the
    folder), and the next backup would copy it again."""
    folder = index.resolve()
    target = dest.resolve()
    if target == folder or folder in target.parents:
        raise ValueError(f"{dest} is inside the index folder {index}: back up elsewhere")


def _copy_into(index: Path, dest: Path) -> None:
    """Every database of ``index`` copied into a staging folder beside ``dest``,
    which becomes ``dest`` only once all are copied and checked: a file that fails
    (a damaged ``feedback.sqlite3`` after a sound index) leaves ``dest`` as it was."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    staging.mkdir()
    try:
        for name in _FILES:
            if (index / name).is_file():
                copy_database(index / name, staging / name)
        if dest.exists():
            dest.rmdir()  # checked empty above; rename() will not replace a folder with files
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def copy_database(source: Path, target: Path) -> None:
    """``source`` copied page by page from one snapshot (sqlite3.Connection.backup)."""
    reader = sqlite3.connect(source, timeout=30)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
        (verdict,) = writer.execute("PRAGMA quick_check").fetchone()
        if verdict != "ok":
            raise OSError(f"the copy of {source} fails its check: {verdict}")
    except sqlite3.DatabaseError as error:
        raise ValueError(f"{source} is damaged ({error}): nothing was backed up") from None
    finally:
        writer.close()
        reader.close()


def _version(path: Path) -> int:
    connection = sqlite3.connect(path)
    try:
        row = connection.execute("SELECT value FROM settings WHERE name = 'version'").fetchone()
    finally:
        connection.close()
    return int(row[0]) if row else 0
