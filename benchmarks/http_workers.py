"""HTTP hybrid retrieve throughput with 1..N worker processes (issue 31), one run.

Builds (once, cached) an index of the Cranfield abstracts with the default
MiniLM model, then for each worker count starts ``rcpkit serve --http
--workers N`` on it and drives it with ``wrk`` (64 keep-alive connections,
hybrid ``retrieve`` over the 225 Cranfield queries in turn). Reports
requests/s, p50/p99, the ratio to one worker's rate measured in the same run
(target: >= 0.8 x N), and each worker's memory: RSS, and PSS (pages shared
with the other workers, the memory-mapped index and mirror cache, counted
once between them). The CPU columns say where the cores went during the load:
cores used by the workers, by ``wrk``, and by the whole machine (other jobs
included), each CPU-seconds over wall seconds; with N > 1 the workers' share
is also given one by one, with the connections each held halfway through the
load (the kernel gives a new connection to whichever worker accepts first, and
``wrk``'s keep-alive connections stay where they landed).

    python benchmarks/http_workers.py [--workers 1,2] [--seconds 15] [--connections 64]
                                      [--engine-threads N]

``--engine-threads N`` sets the engine's ``threads`` (embedding batches run at once,
one onnxruntime thread each; default one per core) in every worker, through a config
file. A query's embedding is one batch, so since issue 51 it takes one thread
whatever N is; before, it spread over N intra-op threads.

Needs ``wrk`` (Debian's package). At these rates ``wrk`` itself takes about
0.01 core; what bounds the gain at N = 2 on a 2-core machine is that one worker
alone already keeps 1.4-1.6 cores busy (the query embedding and the handler
threads run outside the GIL), so a second worker can add only the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

HERE = Path(__file__).resolve().parent
CRANFIELD = HERE.parent.parent / "shared" / "datasets" / "cranfield"
CACHE = Path(os.environ.get("RCPKIT_BENCH_CACHE", Path.home() / ".cache" / "rcpkit-bench"))

_LUA = """local bodies = {}
local i = 0
for line in io.lines("%s") do bodies[#bodies + 1] = line end
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, bodies[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RCPKIT-WRK %%d %%d %%d %%d %%d\\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def build_index() -> Path:
    index = CACHE / "cranfield-minilm"
    if (index / "index.sqlite").exists() or any(index.glob("*.sqlite*")):
        return index
    corpus = CACHE / "cranfield-docs"
    corpus.mkdir(parents=True, exist_ok=True)
    with (CRANFIELD / "corpus.jsonl").open() as lines:
        for line in lines:
            row = json.loads(line)
            text = f"# {row.get('title', '').strip()}\n\n{row['text']}\n"
            (corpus / f"{row['_id']}.md").write_text(text)
    command = [sys.executable, "-m", "rcpkit", "index", str(corpus), "--index", str(index)]
    subprocess.run(command, check=True)
    return index


def queries() -> list[str]:
    with (CRANFIELD / "queries.jsonl").open() as lines:
        return [json.loads(line)["text"] for line in lines]


def serve(index: Path, workers: int, config: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index)]
    command += ["--config", str(config)] if config is not None else []
    command += ["--http", "127.0.0.1:0", "--workers", str(workers), "--max-concurrent", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stderr is not None
    seen = b""
    deadline = time.monotonic() + 300
    while (match := re.search(rb"serving RCP over HTTP on (\S+)", seen)) is None:
        if time.monotonic() > deadline:
            raise TimeoutError(seen.decode())
        chunk = os.read(process.stderr.fileno(), 4096)
        if not chunk:
            raise RuntimeError(seen.decode())
        seen += chunk
    return process, match.group(1).decode()


def warm(url: str, texts: list[str], workers: int) -> None:
    """A few hybrid calls per worker on new connections: each loads its model (retrieve waits)."""
    for number in range(6 * workers):
        with httpx.Client(timeout=300) as client:  # a new connection: any worker
            body = {"jsonrpc": "2.0", "id": 1, "method": "retrieve"}
            body["params"] = {"query": texts[number % len(texts)], "k": 10}
            assert "result" in client.post(url, json=body).json()


def load(url: str, texts: list[str], connections: int, seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        bodies = Path(folder) / "bodies.jsonl"
        lines = []
        for number, text in enumerate(texts):
            params = {"query": text, "k": 10}
            lines.append(
                json.dumps({"jsonrpc": "2.0", "id": number, "method": "retrieve", "params": params})
            )
        bodies.write_text("\n".join(lines) + "\n")
        script = Path(folder) / "load.lua"
        script.write_text(_LUA % bodies)
        command = ["wrk", "-t2", f"-c{connections}", f"-d{round(seconds)}s", "--timeout", "30s"]
        command += ["-s", str(script), url]
        output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    match = re.search(r"RCPKIT-WRK (\d+) (\d+) (\d+) (\d+) (\d+)", output)
    if match is None:
        raise RuntimeError(output)
    requests, micros, p50, p99, errors = (int(group) for group in match.groups())
    return {
        "rate": requests / (micros / 1e6),
        "p50_ms": p50 / 1000,
        "p99_ms": p99 / 1000,
        "errors": errors,
    }


def serving(parent: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """The processes that answer: the workers, or the server itself when it has none."""
    process = psutil.Process(parent.pid)
    return process.children() or [process]


def memory(parent: subprocess.Popen[bytes]) -> list[tuple[float, float]]:
    """(RSS, PSS) in MiB of each worker."""
    figures = []
    for child in serving(parent):
        info = child.memory_full_info()
        figures.append((info.rss / 2**20, info.pss / 2**20))
    return figures


def cpu_seconds(parent: subprocess.Popen[bytes]) -> list[float]:
    """User + system CPU-seconds of each worker."""
    return [sum(child.cpu_times()[:2]) for child in serving(parent)]


def connections(parent: subprocess.Popen[bytes]) -> list[int]:
    """Established TCP connections each worker holds."""
    return [
        sum(link.status == psutil.CONN_ESTABLISHED for link in child.net_connections("tcp"))
        for child in serving(parent)
    ]


def waited_cpu_seconds() -> float:
    """CPU of this script's finished children: ``wrk`` (the server is reaped later)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds() -> float:
    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def measure(
    index: Path, texts: list[str], workers: int, args: argparse.Namespace
) -> dict[str, Any]:
    """One server with ``workers`` workers under ``wrk``: rate, latency, CPU, memory."""
    process, url = serve(index, workers, args.config)
    try:
        warm(url, texts, workers)
        before, wrk, busy = cpu_seconds(process), waited_cpu_seconds(), machine_busy_seconds()
        held: list[int] = []
        halfway = threading.Timer(args.seconds / 2, lambda: held.extend(connections(process)))
        halfway.start()
        start = time.monotonic()
        figures: dict[str, Any] = load(url, texts, args.connections, args.seconds)
        wall = time.monotonic() - start
        halfway.join()
        after = cpu_seconds(process)
        each = [late - early for early, late in zip(before, after, strict=True)]
        figures["per_cpu_second"] = figures["rate"] * args.seconds / sum(each)
        figures["worker_cores"] = sum(each) / wall
        figures["each"] = [(used / wall, count) for used, count in zip(each, held, strict=True)]
        figures["wrk_cores"] = (waited_cpu_seconds() - wrk) / wall
        figures["busy_cores"] = (machine_busy_seconds() - busy) / wall
        figures["memory"] = memory(process)
    finally:
        process.terminate()
        process.wait(120)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2", help="counts in turn, e.g. 1,2,1,2")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--engine-threads", type=int, help="the engine's threads in each worker")
    args = parser.parse_args()
    args.config = None
    if args.engine_threads is not None:
        args.config = CACHE / f"engine-threads-{args.engine_threads}.toml"
        args.config.parent.mkdir(parents=True, exist_ok=True)
        args.config.write_text(f"[engine]\nthreads = {args.engine_threads}\n")
    index = build_index()
    texts = queries()
    rows = [
        (workers, measure(index, texts, workers, args))
        for workers in [int(part) for part in args.workers.split(",")]
    ]
    ones = sorted(figures["rate"] for workers, figures in rows if workers == 1)
    base = ones[len(ones) // 2] if ones else rows[0][1]["rate"]  # one worker's rate, this run
    print(
        "| workers | req/s | x one worker | target | p50 ms | p99 ms | errors "
        "| requests per CPU-second | cores: workers / wrk / machine "
        "| per-worker cores, connections | per-worker RSS / PSS MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for workers, figures in rows:
        per = ", ".join(f"{rss:.0f} / {pss:.0f}" for rss, pss in figures["memory"])
        each = ", ".join(f"{cores:.2f}, {count}" for cores, count in figures["each"])
        print(
            f"| {workers} | {figures['rate']:.1f} | {figures['rate'] / base:.2f}x | "
            f">= {0.8 * workers:.1f}x | {figures['p50_ms']:.1f} | {figures['p99_ms']:.1f} | "
            f"{figures['errors']:.0f} | {figures['per_cpu_second']:.1f} | "
            f"{figures['worker_cores']:.2f} / {figures['wrk_cores']:.2f} / "
            f"{figures['busy_cores']:.2f} | {each} | {per} |"
        )


if __name__ == "__main__":
    main()
