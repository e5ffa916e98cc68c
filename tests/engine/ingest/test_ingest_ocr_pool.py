"""The OCR pool when a worker dies: the file that killed it is skipped, no other is lost.

A native crash or the out-of-memory killer takes a worker with every file in
flight; the pool must find which file it was (by reading again one at a time)
and never read an OCR-bound file in the indexing process, where the same
crash would end the whole run. The loader here stands in for OCR (it kills
its worker on a file named ``crash*``); the pool's handling is the real one.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from rcpkit.engine.ingest import Skipped, ocr_pool
from rcpkit.engine.ingest._walk import find_sources
from rcpkit.engine.ingest.ocr_pool import DIED, OcrPool

pytestmark = pytest.mark.skipif(
    not ocr_pool._ocr.ocr_available(), reason="the 'ocr' extra is not installed"
)


def _killing_loader(source: object) -> list[Skipped]:
    path: Path = source.path  # type: ignore[attr-defined]
    if path.name.startswith("crash"):
        os.kill(os.getpid(), signal.SIGKILL)
    return [Skipped(path, f"read by {os.getpid()}")]


def _read(folder: Path, names: list[str], workers: int) -> dict[str, str]:
    for name in names:
        (folder / name).write_bytes(b"\x89PNG not decoded by this loader")
    sources = [s for s in find_sources([folder], root=folder) if not isinstance(s, Skipped)]
    done: list[tuple[int, int]] = []
    out: dict[str, str] = {}
    with OcrPool(
        sources, workers, lambda n, total: done.append((n, total)), _killing_loader
    ) as pool:
        for source in sources:
            for item in pool.load(source):
                assert isinstance(item, Skipped)
                out[item.path.name] = item.reason
    assert done[-1] == (len(names), len(names))  # progress counted every file once
    return out


def test_the_file_that_kills_a_worker_is_skipped_and_every_other_is_read(tmp_path: Path) -> None:
    names = ["a.png", "b.png", "c.png", "crash.png", "d.png", "e.png", "f.png"]
    got = _read(tmp_path, names, workers=2)
    assert got.pop("crash.png") == DIED
    assert sorted(got) == sorted(set(names) - {"crash.png"})
    readers = {reason.removeprefix("read by ") for reason in got.values()}
    assert str(os.getpid()) not in readers  # never read in the indexing process


def test_several_killing_files_are_each_skipped_and_the_run_ends(tmp_path: Path) -> None:
    names = ["crash1.png", "a.png", "crash2.png", "crash3.png", "b.png"]
    got = _read(tmp_path, names, workers=1)
    assert {name: got[name] == DIED for name in names} == {
        "crash1.png": True,
        "a.png": False,
        "crash2.png": True,
        "crash3.png": True,
        "b.png": False,
    }
