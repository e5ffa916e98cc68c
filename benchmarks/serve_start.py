"""Time to an answered ``initialize`` for a MiniLM index's server against a keyword one.

    python benchmarks/serve_start.py [RUNS]     (default 3)

The test suite checks the order (tests/e2e/test_engine_cli.py: since issue 51
``initialize`` is answered only once the model is loaded and warm); this prints
how long ``rcpkit serve --stdio`` takes to answer it over an index of the
bundled samples, as a ratio against the in-memory keyword engine's server
measured alternately in the same run, so the machine's load
falls on both.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources

SAMPLES = str(resources.files("rcpkit") / "samples")
HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def _seconds_to_initialize(*engine: str) -> float:
    command = [sys.executable, "-m", "rcpkit", "serve", "--stdio", *engine]
    started = time.perf_counter()
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(HELLO).encode() + b"\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        elapsed = time.perf_counter() - started
        assert "result" in answer, answer
        server.stdin.close()
        server.wait()
    return elapsed


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as index:
        subprocess.run(
            [sys.executable, "-m", "rcpkit", "index", SAMPLES, "--index", index],
            check=True,
            capture_output=True,
        )
        engine, keyword = [], []
        for _ in range(runs):
            engine.append(_seconds_to_initialize("--engine", "index", "--index", index))
            keyword.append(_seconds_to_initialize("--engine", "keyword"))
    model, baseline = statistics.median(engine), statistics.median(keyword)
    print(
        f"initialize answered: MiniLM index {model:.2f} s against keyword engine "
        f"{baseline:.2f} s ({model / baseline:.2f}×, median of {runs})"
    )
