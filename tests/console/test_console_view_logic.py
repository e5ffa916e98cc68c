"""The console's view logic (pure ES modules) under node's own test runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TESTS = sorted((Path(__file__).parent / "js").glob("*.test.mjs"))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_view_logic_passes_its_node_tests() -> None:
    assert TESTS, "no node tests found"
    done = subprocess.run(
        ["node", "--test", *map(str, TESTS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"# pass {sum(_count(path) for path in TESTS)}" in done.stdout


def _count(path: Path) -> int:
    """The tests a file declares, so a file that silently runs none is caught."""
    return path.read_text().count('\ntest("')
