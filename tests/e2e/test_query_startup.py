"""What a whole ``rcpkit query`` imports: only what retrieving needs (issue 51, a fast CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit

SAMPLES = str(resources.files("rcpkit") / "samples")
# Ingest parsers a query never runs; each costs start-up time on every query.
NOT_FOR_QUERIES = ("pypdf",)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("startup") / "idx"
    built = rcpkit("index", SAMPLES, "--index", str(folder), *HASHING)
    assert built.returncode == 0, built.stderr
    return folder


def _modules_of_query(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``rcpkit query ARGS`` through the CLI's own entry point, then list sys.modules."""
    script = (
        "import json, runpy, sys\n"
        f"sys.argv = ['rcpkit', 'query', *{list(args)!r}]\n"
        "try:\n    runpy.run_module('rcpkit', run_name='__main__')\n"
        "except SystemExit as done:\n    status = done.code\n"
        "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))\n"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    last = json.loads(done.stdout.splitlines()[-1])
    assert last["status"] == 0, done.stderr
    return done, set(last["modules"])


def test_a_query_answers_without_importing_any_ingest_parser(index: Path) -> None:
    done, modules = _modules_of_query("rank fusion", "--index", str(index), *HASHING)
    assert "hits (index version" in done.stdout
    loaded = {name for name in modules if name.split(".")[0] in NOT_FOR_QUERIES}
    assert loaded == set()
