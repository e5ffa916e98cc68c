"""An interrupted `rcpkit index` keeps what it committed; a re-run finishes it (issue 51).

The real CLI with the bundled MiniLM, into SQLite, PostgreSQL and SolrCloud,
killed (SIGKILL, then Ctrl-C) once the index's version has grown, which the test
observes by polling the store (the index file, the versions table, Solr's
committed version record).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from cli_support import rcpkit

FILES = 1280  # one chunk each: five embedder calls of 256, each committed (--commit-seconds 0)
_WORDS = (
    "heron pelican river stone garden lantern copper meadow harbor violin thunder maple "
    "quartz orbit canyon ember falcon glacier willow saffron"
).split()


def write_notes(folder: Path, count: int) -> Path:
    folder.mkdir()
    rng = random.Random(51)
    for number in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(12))
        (folder / f"note{number:04d}.md").write_text(f"# Note {number}\n\n{words} {number}.\n")
    return folder


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "notes", FILES)


def start(notes: Path, index: Path, *flags: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment.pop("RCPKIT_EMBEDDER", None)  # the bundled MiniLM
    command = [sys.executable, "-m", "rcpkit", "index", str(notes), "--index", str(index)]
    return subprocess.Popen(
        [*command, "--commit-seconds", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        # A shell's background job (`pytest &`) ignores SIGINT, and its children would
        # too: the child gets the default disposition, so Ctrl-C is Python's again.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


Version = Callable[[], int]


def version(index: Path) -> int:
    """The index's latest version as its file holds it (0 before the first commit)."""
    try:
        with sqlite3.connect(index / "index.sqlite3", timeout=30) as db:
            row = db.execute("SELECT value FROM settings WHERE name = 'version'").fetchone()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(row[0]) if row else 0


def wait_for_version(latest: Version, above: int, process: subprocess.Popen[str]) -> int:
    """Poll (bounded) until the running index commits a version past ``above``."""
    deadline = time.monotonic() + 240
    while (now := latest()) <= above:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"no version past {above}"
        time.sleep(0.02)
    return now


def interrupt(
    notes: Path, index: Path, how: signal.Signals, *flags: str, latest: Version | None = None
) -> subprocess.CompletedProcess[str]:
    """Start an index run and send it ``how`` once it has committed one more version."""
    latest = latest or (lambda: version(index))
    process = start(notes, index, *flags)
    wait_for_version(latest, latest(), process)
    assert process.poll() is None  # still running: the signal cuts the run short
    process.send_signal(how)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def snapshot(index: Path) -> tuple[list[Any], list[Any], np.ndarray[Any, Any]]:
    """Live documents, chunks and chunk vectors, in id order."""
    with sqlite3.connect(index / "index.sqlite3") as db:
        documents = db.execute(
            "SELECT doc_id, title, uri, content_hash, text, meta FROM documents "
            "WHERE removed IS NULL ORDER BY doc_id"
        ).fetchall()
        rows = db.execute(
            'SELECT doc_id, idx, start, "end", page, text, context, filter_meta, vector '
            "FROM chunks WHERE removed IS NULL ORDER BY doc_id, idx"
        ).fetchall()
    vectors = np.stack([np.frombuffer(row[-1], dtype=np.float32) for row in rows])
    return documents, [row[:-1] for row in rows], vectors


def live_chunks(index: Path) -> int:
    with sqlite3.connect(index / "index.sqlite3") as db:
        return int(db.execute("SELECT count(*) FROM chunks WHERE removed IS NULL").fetchone()[0])


def summary_count(summary: str, label: str) -> tuple[int, int]:
    found = re.search(rf"^\s+{label}\s+(\d+) documents?(?:\s+(\d+) chunks?)?", summary, re.M)
    assert found is not None, summary
    return int(found.group(1)), int(found.group(2) or 0)


@pytest.mark.timeout(600)
def test_killed_runs_keep_their_commits_and_the_rerun_embeds_only_the_rest(
    notes: Path, tmp_path: Path
) -> None:
    whole = tmp_path / "whole"
    uninterrupted = rcpkit("index", str(notes), "--index", str(whole))
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    assert summary_count(uninterrupted.stdout, "indexed") == (FILES, FILES)

    resumed = tmp_path / "resumed"
    for _ in range(2):  # SIGKILL at two points: no cleanup runs, the commits stay
        killed = interrupt(notes, resumed, signal.SIGKILL)
        assert killed.returncode == -signal.SIGKILL
    kept_by_kills = live_chunks(resumed)
    assert 0 < kept_by_kills < FILES

    stopped = interrupt(notes, resumed, signal.SIGINT)  # Ctrl-C says what was kept
    assert stopped.returncode == 130, stopped.stderr
    assert "Traceback" not in stopped.stderr
    said = re.search(r"interrupted; kept (\d+) documents? \((\d+) chunks?\)", stopped.stderr)
    assert said is not None, stopped.stderr
    kept = live_chunks(resumed)
    assert int(said.group(2)) == kept - kept_by_kills  # what this run committed
    assert kept < FILES

    finished = rcpkit("index", str(notes), "--index", str(resumed))
    assert finished.returncode == 0, finished.stderr
    assert summary_count(finished.stdout, "unchanged") == (kept, 0)
    assert summary_count(finished.stdout, "indexed") == (FILES - kept, FILES - kept)

    documents, chunks, vectors = snapshot(resumed)
    expected_documents, expected_chunks, expected_vectors = snapshot(whole)
    assert documents == expected_documents
    assert chunks == expected_chunks
    # Batches are cut differently, so padding differs: equal up to float tolerance.
    np.testing.assert_allclose(vectors, expected_vectors, atol=1e-4)


def killed_and_finished(tmp_path: Path, store: str, latest: Version) -> None:
    """A run into ``store`` killed after a commit keeps it; the re-run does only the rest."""
    notes = write_notes(tmp_path / "notes", 768)  # three embedder calls of 256
    flags = ("--index", str(tmp_path / "local"), "--store", store)
    killed = interrupt(notes, tmp_path / "local", signal.SIGKILL, *flags[2:], latest=latest)
    assert killed.returncode == -signal.SIGKILL
    shown = rcpkit("stats", *flags, "--json")
    assert shown.returncode == 0, shown.stderr
    kept = json.loads(shown.stdout)["documents"]
    assert 0 < kept < 768

    finished = rcpkit("index", str(notes), *flags)
    assert finished.returncode == 0, finished.stderr
    assert summary_count(finished.stdout, "unchanged") == (kept, 0)
    assert summary_count(finished.stdout, "indexed") == (768 - kept, 768 - kept)
    assert summary_count(finished.stdout, "total") == (768, 768)
    assert finished.stderr.count("\n") == 3  # off a terminal: quiet, as over SQLite
    assert re.search(r"^\s+embedded\s+\d+\.\d chunks/s", finished.stdout, re.MULTILINE)


@pytest.mark.timeout(600)
def test_a_killed_run_into_postgres_keeps_its_commits(tmp_path: Path, postgres_url: str) -> None:
    def latest() -> int:
        with psycopg.connect(postgres_url) as db:
            try:
                row = db.execute("SELECT version FROM versions").fetchone()
            except psycopg.errors.UndefinedTable:  # not migrated yet
                return 0
        return int(row[0]) if row else 0

    killed_and_finished(tmp_path, postgres_url, latest)


def _solr_version(solr_url: str) -> int:
    """The collection's committed version, read from Solr itself (what every server sees)."""
    host = solr_url.removeprefix("solr://")
    query = urllib.parse.urlencode({"q": 'id:"rcpkit!sversion"', "fl": "value", "wt": "json"})
    with urllib.request.urlopen(f"http://{host}/select?{query}", timeout=30) as answer:
        found = json.load(answer)["response"]["docs"]
    return int(found[0]["value"]) if found else 0


@pytest.mark.timeout(900)
def test_a_killed_run_into_solr_keeps_its_commits(tmp_path: Path, solr_url: str) -> None:
    killed_and_finished(tmp_path, solr_url, lambda: _solr_version(solr_url))
