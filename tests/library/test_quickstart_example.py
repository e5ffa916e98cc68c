"""The README's in-process quick start is examples/library_quickstart.py, verbatim, and it runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "library_quickstart.py"


def test_the_readme_quick_start_opens_with_the_example_verbatim() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1]
    first_block = quick_start.split("```python\n", 1)[1].split("```", 1)[0]
    assert first_block == EXAMPLE.read_text()
    assert len(first_block.splitlines()) <= 10
    assert f"```python\n{EXAMPLE.read_text()}```" in (ROOT / "docs" / "sdk.md").read_text()


def test_the_example_indexes_a_folder_and_finds_the_filtered_document(tmp_path: Path) -> None:
    shutil.copytree(Path(str(resources.files("rcpkit") / "samples")), tmp_path / "docs")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment.pop("RCPKIT_EMBEDDER", None)
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=environment,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()  # the filter leaves the one billing document
    hit_id, score, source, text = line.split(" ", 3)
    assert (hit_id, source) == ("refunds#0", "refunds")
    assert float(score) > 0
    assert text == "Refunds go back to the card within 14 days."
    assert (tmp_path / "idx" / "index.sqlite3").is_file()
