"""Quality floor on the worst of issue 33's collections, through `rcpkit eval`.

The collections (``rcpkit.evaluation.collections``) were measured with every
default chosen by the worst dev ratio (BENCHMARKS.md, "Quality that holds
everywhere"). The worst held-out ratio of the default `retrieve` to the in-run
bm25s baseline is man-long's: man pages' DESCRIPTION sections, the NAME line's
few words as the query (measured 1.055× on its held-out half; 1.073× since the
proximity stage, 2026-12-05). Its snapshot
as generated on this project's machine is ``data/man-long.tar.gz`` (668 pages;
the man pages installed elsewhere differ), loaded as outside judges load a
collection (``--layout meta-title``) into an engine spawned over stdio with the
bundled MiniLM. The test fails below 1.043× on the held-out half (the
measurement minus 0.03, about the dev/held-out gap), if the default falls
below the one-pass hybrid (RRF, no feedback) there, or recalls less in its top
100 than BM25 does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).with_name("data") / "man-long.tar.gz"
FLOOR = 1.043


@pytest.mark.timeout(900)
def test_the_default_holds_its_floor_on_the_worst_collection(tmp_path: Path) -> None:
    with tarfile.open(SNAPSHOT) as archive:
        archive.extractall(tmp_path, filter="data")
    record = tmp_path / "man-long.json"
    done = subprocess.run(
        [sys.executable, "-m", "rcpkit", "eval", str(tmp_path / "man-long"), "--index",
         str(tmp_path / "idx"), "--layout", "meta-title", "--split", "heldout",
         "--stages", "default,hybrid-rrf", "--no-progress", "--json", str(record)],
        capture_output=True, text=True, timeout=880, check=False,
    )  # fmt: skip
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(record.read_text())
    runs = {run["key"]: run for run in result["runs"]}
    default, one_pass = runs["default"], runs["hybrid-rrf"]
    assert default["failedQueries"] == 0
    assert default["ratioToBaseline"] >= FLOOR
    assert default["ratioToBaseline"] >= one_pass["ratioToBaseline"]
    assert default["aggregate"]["R@100"] >= result["baseline"]["aggregate"]["R@100"]
