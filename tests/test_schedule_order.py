"""The order `make test`'s `-n 2 --dist loadfile` hands out files in (tests/conftest.py).

xdist handed out files by their number of tests, most first, so the quality floors
(one test each, 100-150 s) started last and ran alone at the end of the run. One
worker runs the files in the order they are handed out, so its log shows that order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

HEAVY = """
import pytest

@pytest.mark.heavy
def test_one_long(): pass
"""
BUDGETED = """
import pytest

@pytest.mark.timeout(900)
def test_one_long_too(): pass
"""


def _outside_pytest() -> dict[str, str]:
    """This environment without what this run (an xdist worker, PYTEST_ADDOPTS) sets."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}


def _tests(count: int) -> str:
    return "".join(f"def test_{n}(): pass\n" for n in range(count))


def test_files_of_heavy_tests_are_handed_out_first_then_the_largest(tmp_path: Path) -> None:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    heavy: long by design\n")
    files = {
        "test_a_two.py": _tests(2),
        "test_b_heavy.py": HEAVY,
        "test_c_three.py": _tests(3),
        "test_d_one.py": _tests(1),
        "test_e_budgeted.py": BUDGETED,
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    # Only the plugins this needs: the venv's others (LangChain's, Haystack's, …) cost
    # seconds of CPU to load in the run and again in its worker.
    plugins = ["-p", "xdist", "-p", "pytest_timeout", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-n", "1", "--dist", "loadfile", "-v"],
        cwd=tmp_path, env={**_outside_pytest(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True, text=True, timeout=50, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ran = re.findall(r"PASSED (test_\w+)\.py::", done.stdout)
    started = list(dict.fromkeys(ran))
    assert started == ["test_b_heavy", "test_e_budgeted", "test_c_three", "test_a_two",
                       "test_d_one"], done.stdout  # fmt: skip
    assert len(ran) == 8
