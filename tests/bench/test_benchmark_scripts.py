"""The scripts under benchmarks/ run as `python benchmarks/NAME.py`."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_no_script_shadows_a_standard_library_module() -> None:
    # Run as a script, its folder comes first on sys.path: a `http.py` there made
    # every other script's `import urllib.request` fail ("'http' is not a package").
    names = {path.stem for path in BENCHMARKS.glob("*.py")}
    assert names, BENCHMARKS
    assert not names & set(sys.stdlib_module_names)
