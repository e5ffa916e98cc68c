"""The real ``rcpkit bench`` as a subprocess, at the tiny ``--smoke`` scale (no speed asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rcpkit_bench.report import BEGIN, END


@pytest.mark.heavy  # the protocol suite against its baselines: past 60 s under load
def test_a_smoke_protocol_run_prints_writes_json_and_updates_a_readme(tmp_path: Path) -> None:
    out, readme = tmp_path / "figures.json", tmp_path / "README.md"
    readme.write_text(f"# kept\n{BEGIN}\n{END}\n", encoding="utf-8")
    argv = ["bench", "protocol", "--smoke", "--markdown", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "rcpkit", *argv, "--update-readme", str(readme)],
        capture_output=True,
        text=True,
        timeout=840,  # under the heavy budget: a hang fails here, with stderr
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| protocol | stdio ping, 64 in flight |" in done.stdout
    figures = json.loads(out.read_text(encoding="utf-8"))["figures"]
    assert {row["suite"] for row in figures} == {"protocol"}
    assert all(row["value"] > 0 for row in figures)
    baselines = {row["baseline"] for row in figures}
    assert {"reference SDK rcp.Server", "bare asyncio echo loop"} <= baselines
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# kept\n{BEGIN}\n| suite |")
    assert "a `--smoke` run" in text
