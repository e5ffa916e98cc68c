"""`rcpkit index` on every core builds the index one core builds (issue 51 item 3).

The real CLI with the bundled MiniLM, ``[engine] threads`` 1 and 2: the same
documents, chunks and vectors, and the summary's chunks/s line.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

_WORDS = "heron pelican river stone garden lantern copper meadow harbor violin".split()


def write_notes(folder: Path, count: int) -> Path:
    """Notes of uneven length, so the length-sorted batches differ in width."""
    folder.mkdir()
    rng = random.Random(51)
    for number in range(count):
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 300)))
        (folder / f"note{number:02d}.md").write_text(f"# Note {number}\n\n{words}.\n")
    return folder


def index_with_threads(notes: Path, index: Path, threads: int) -> str:
    config = index.parent / f"threads-{threads}.toml"
    config.write_text(f"[engine]\nthreads = {threads}\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment.pop("RCPKIT_EMBEDDER", None)  # the bundled MiniLM
    command = [sys.executable, "-m", "rcpkit", "index", str(notes), "--index", str(index)]
    done = subprocess.run(
        [*command, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def snapshot(index: Path) -> tuple[list[Any], list[Any], np.ndarray[Any, Any]]:
    """Live documents, chunks and chunk vectors, in id order."""
    with sqlite3.connect(index / "index.sqlite3") as db:
        documents = db.execute(
            "SELECT doc_id, title, uri, content_hash, text FROM documents "
            "WHERE removed IS NULL ORDER BY doc_id"
        ).fetchall()
        rows = db.execute(
            'SELECT doc_id, idx, start, "end", text, context, vector FROM chunks '
            "WHERE removed IS NULL ORDER BY doc_id, idx"
        ).fetchall()
    vectors = np.stack([np.frombuffer(row[-1], dtype=np.float32) for row in rows])
    return documents, [row[:-1] for row in rows], vectors


@pytest.mark.timeout(1200)
def test_two_threads_build_the_index_one_thread_builds(tmp_path: Path) -> None:
    notes = write_notes(tmp_path / "notes", 40)
    one = index_with_threads(notes, tmp_path / "one", 1)
    two = index_with_threads(notes, tmp_path / "two", 2)
    for summary in (one, two):
        assert re.search(r"embedded\s+[\d.]+ chunks/s", summary), summary
    documents, chunks, vectors = snapshot(tmp_path / "two")
    expected_documents, expected_chunks, expected_vectors = snapshot(tmp_path / "one")
    assert len(chunks) > 16  # more than one batch of 16: batches ran side by side
    assert documents == expected_documents
    assert chunks == expected_chunks
    np.testing.assert_allclose(vectors, expected_vectors, atol=1e-6)
