"""A file that is not an rcpkit index, through the real CLI (issue 52, item 3).

A zero-length ``index.sqlite3`` was taken for a new, empty index: ``query``,
``stats`` and ``serve`` answered "0 hits" with exit 0, wrote a fresh schema
into the file and overwrote ``index.mirror``. Now every command that opens an
index refuses it with one line naming the file, exit 2, and leaves every byte
and every mtime in the index folder as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit
from test_ingest_cli import index

# A CLI process per command, each a second or more on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(300)

Snapshot = dict[str, tuple[int, int, str]]


def snapshot(folder: Path) -> Snapshot:
    """Every file under ``folder``: its size, mtime and digest."""
    return {
        str(path.relative_to(folder)): (
            path.stat().st_size,
            path.stat().st_mtime_ns,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _bit_flipped(path: Path) -> None:
    """One bit of the page type of the chunks table's root page flipped."""
    with sqlite3.connect(path) as connection:
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'chunks'"
        ).fetchone()
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    connection.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page_size] ^= 0x01
    path.write_bytes(bytes(data))


def _another_database(path: Path) -> None:
    path.unlink()
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('not an index')")
    connection.close()


def _not_sqlite(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 64)


DAMAGES: dict[str, Callable[[Path], None]] = {
    "empty": _empty,
    "truncated": _truncated,
    "bit-flipped": _bit_flipped,
    "another SQLite database": _another_database,
    "not SQLite": _not_sqlite,
}


@pytest.fixture
def built(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, words in [("herons", "herons wade"), ("otters", "otters swim")]:
        (docs / f"{name}.md").write_text(f"# {name}\n\nNotes: {words} in rivers.\n")
    folder = tmp_path / "idx"
    index(folder, docs)
    done = rcpkit("query", "herons", "--index", str(folder), *HASHING)
    assert done.returncode == 0, done.stderr  # a query saves the mirror beside the file
    assert (folder / "index.mirror").stat().st_size > 0
    return folder


def serve_stdio(folder: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """``rcpkit serve`` with its stdin at end of file: a server that opened answers
    nothing and exits 0."""
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(folder), *HASHING, *flags]
    return subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def refused(done: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("rcpkit")]
    assert len(errors) == 1, done.stderr  # beside `rcpkit index`'s progress lines
    assert str(folder / "index.sqlite3") in errors[0]


def test_a_zero_length_index_is_refused_by_every_command_and_nothing_is_touched(
    built: Path, tmp_path: Path
) -> None:
    _empty(built / "index.sqlite3")
    before = snapshot(built)
    out = tmp_path / "out"
    commands = [
        ["query", "herons", *HASHING],
        ["stats"],
        ["show", "herons.md"],
        ["export", "--output", str(out / "export.jsonl")],
        ["delete", "herons.md", *HASHING],
        ["tenants", "list", *HASHING],
        ["backup", str(out / "copy")],
    ]
    for command in commands:
        refused(rcpkit(*command, "--index", str(built)), built)
    refused(serve_stdio(built), built)
    assert snapshot(built) == before
    assert not out.exists()  # no empty export, no half backup


@pytest.mark.parametrize("damage", list(DAMAGES), ids=list(DAMAGES))
def test_a_damaged_index_is_an_error_naming_it_and_nothing_is_touched(
    built: Path, damage: str
) -> None:
    DAMAGES[damage](built / "index.sqlite3")
    before = snapshot(built)
    refused(rcpkit("query", "herons", "--index", str(built), *HASHING), built)
    refused(rcpkit("stats", "--index", str(built)), built)
    refused(serve_stdio(built), built)
    assert snapshot(built) == before


@pytest.mark.parametrize("damage", [name for name in DAMAGES if name != "empty"])
def test_creating_commands_never_take_a_file_with_something_else_in_it(
    built: Path, damage: str
) -> None:
    # `rcpkit index` and `serve --create` start an index where there is none (or a
    # zero-length file); a file holding anything else is someone's data.
    DAMAGES[damage](built / "index.sqlite3")
    before = snapshot(built)
    refused(rcpkit("index", str(built.parent / "docs"), "--index", str(built), *HASHING), built)
    refused(serve_stdio(built, "--create"), built)
    assert snapshot(built) == before


def test_index_and_serve_create_still_start_a_new_index(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("# Herons\n\nHerons wade.\n")
    summary = index(tmp_path / "fresh", docs)
    assert "version 1" in summary
    assert serve_stdio(tmp_path / "empty", "--create").returncode == 0
    assert (tmp_path / "empty" / "index.sqlite3").stat().st_size > 0
    stats = rcpkit("stats", "--index", str(tmp_path / "empty"))
    assert stats.returncode == 0 and "documents    0" in stats.stdout, stats.stderr


def test_a_damaged_mirror_costs_no_document(built: Path) -> None:
    # The mirror is a cache: a spoiled one is rebuilt from the database, never trusted.
    (built / "index.mirror").write_bytes(bytes(range(256)) * 64)
    done = rcpkit("query", "herons", "--index", str(built), *HASHING, "--mode", "sparse")
    assert done.returncode == 0, done.stderr
    assert "herons.md" in done.stdout
    stats = rcpkit("stats", "--index", str(built))
    assert "documents    2" in stats.stdout, stats.stdout


def test_a_damaged_state_file_is_an_error_naming_it(built: Path) -> None:
    (built / "feedback.sqlite3").write_bytes(bytes(range(256)) * 64)
    done = rcpkit("query", "herons", "--index", str(built), *HASHING)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert str(built / "feedback.sqlite3") in done.stderr


def test_a_backup_inside_the_index_folder_is_refused(built: Path) -> None:
    before = snapshot(built)
    for dest in (built / "backup", built, built / "deeper" / "copy"):
        done = rcpkit("backup", str(dest), "--index", str(built))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert "inside the index folder" in done.stderr
    assert snapshot(built) == before


@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "empty folder"])
def test_a_backup_that_fails_on_any_file_leaves_its_destination_as_it_was(
    built: Path, tmp_path: Path, existing: bool
) -> None:
    # The index file is sound and copied first; the damaged state file after it
    # used to fail only once index.sqlite3 was already written into DEST.
    (built / "feedback.sqlite3").write_bytes(bytes(range(256)) * 64)
    dest = tmp_path / "copy"
    if existing:
        dest.mkdir()
    before = snapshot(built)
    done = rcpkit("backup", str(dest), "--index", str(built))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "feedback.sqlite3" in done.stderr
    assert dest.exists() == existing
    assert not existing or not any(dest.iterdir())
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".copy")] == []
    assert snapshot(built) == before


def test_an_export_that_fails_midway_leaves_its_output_file_as_it_was(
    built: Path, tmp_path: Path
) -> None:
    # The second document's stored meta is spoiled: the export fails after the first
    # line, and used to leave that line in place of what the file held.
    with sqlite3.connect(built / "index.sqlite3") as db:
        db.execute("UPDATE documents SET meta = '{spoiled' WHERE doc_id = 'otters.md'")
    db.close()
    output = tmp_path / "out.jsonl"
    output.write_text("the previous export\n")
    done = rcpkit("export", "--index", str(built), "--output", str(output))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "otters.md" in done.stderr
    assert output.read_text() == "the previous export\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs", "idx", "out.jsonl"]
