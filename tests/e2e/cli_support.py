"""The real ``rcpkit`` CLI run as a child process, for the e2e CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HASHING = ("--embedder", "hashing:64")


def rcpkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m rcpkit ARGS`` with this tree importable and the developer's
    ``RCPKIT_EMBEDDER`` unset, so only the flags decide the embedder."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    environment.pop("RCPKIT_EMBEDDER", None)
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=environment,
    )
