"""A fresh ``rcpkit serve`` is warm when it answers ``initialize`` (issue 51, a fast CLI)."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from process_support import read_until

SAMPLES = str(resources.files("rcpkit") / "samples")
WARM = rb"models loaded and warm"


def test_the_model_is_loaded_and_run_before_initialize_is_answered(
    spawn: Any, tmp_path: Path
) -> None:
    index = str(tmp_path / "idx")
    built = subprocess.run(
        [sys.executable, "-m", "rcpkit", "index", SAMPLES, "--index", index],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    server = spawn("--engine", "index", "--index", index, "--log-level", "INFO")
    server.send(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    assert "result" in server.recv(timeout=120)
    # Logged before the server read its first frame, so already in the pipe: no wait.
    read_until(server.process, b"", WARM, timeout=0.0)
    hits = server.request(2, "retrieve", {"query": "reciprocal rank fusion", "mode": "hybrid"})
    assert hits["result"]["hits"]
