"""Loading a folder of small Markdown files against reading their bytes, in one run.

    python benchmarks/walk_files.py [FILES]     (default 1000)

The test suite bounds the walk's work (one read and at most two stats a file,
tests/engine/ingest/test_ingest_loaders.py); this prints its time as a ratio
against a plain ``os.walk`` that reads every file, measured alternately in the
same run so the machine's load falls on both.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rcpkit.engine.ingest import SourceDocument, iter_documents


def _tree(root: Path, files: int) -> None:
    for index in range(files):
        path = root / f"part{index // 100}" / f"note{index:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# Note {index}\n\nSome text about topic {index}.\n\n## Details\n\nMore.\n"
        )


def _load(root: Path) -> int:
    return sum(isinstance(item, SourceDocument) for item in iter_documents([root]))


def _read(root: Path) -> int:
    count = 0
    for folder, _, names in os.walk(root):
        for name in names:
            Path(folder, name).read_bytes().decode()
            count += 1
    return count


def _seconds(work: Callable[[Path], int], root: Path) -> float:
    started = time.perf_counter()
    work(root)
    return time.perf_counter() - started


if __name__ == "__main__":
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as folder:
        root = Path(folder)
        _tree(root, files)
        assert _load(root) == _read(root) == files  # warm the page cache, check the tree
        loads, reads = [], []
        for _ in range(5):
            loads.append(_seconds(_load, root))
            reads.append(_seconds(_read, root))
    load, read = statistics.median(loads), statistics.median(reads)
    print(
        f"load {files} files: {load * 1000:.0f} ms against reading them: {read * 1000:.0f} ms "
        f"({load / read:.1f}×, median of 5)"
    )
