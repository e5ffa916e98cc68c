"""Each ``rcpkit serve --http --workers N`` worker's memory on one index: RSS, PSS, USS.

Starts the server on INDEX, waits for its N workers, lets them settle (open the
index, build the int8 codes) and prints each worker's resident set (RSS), its
proportional share of the pages it shares with others (PSS) and the pages only it
holds (USS), in MB (10^6 bytes), from ``/proc/PID/smaps`` (psutil's
``memory_full_info``). What the workers share (the memory-mapped mirror cache,
the vector matrix in RAM: issue 31 item 1) shows as PSS below RSS and USS below
PSS. To compare two trees in one run, run it with each tree's ``src`` first on
``PYTHONPATH``.

    python benchmarks/workers_memory.py INDEX [--workers 2] [--settle 30]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import psutil


def measure(index: Path, workers: int, settle: float) -> list[tuple[float, float, float]]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index)]
    command += ["--http", "127.0.0.1:0", "--workers", str(workers)]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert server.stderr is not None
    try:
        seen = b""
        while re.search(rb"serving RCP over HTTP on", seen) is None:
            line = server.stderr.readline()
            if not line:
                raise RuntimeError(seen.decode())
            seen += line
        parent = psutil.Process(server.pid)
        while len(parent.children()) < workers:
            time.sleep(0.2)
        time.sleep(settle)
        figures = []
        for child in parent.children():
            info = child.memory_full_info()
            figures.append((info.rss / 1e6, info.pss / 1e6, info.uss / 1e6))
        return figures
    finally:
        server.terminate()
        server.wait(120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--settle", type=float, default=30.0, help="seconds after the last start")
    args = parser.parse_args()
    for number, (rss, pss, uss) in enumerate(measure(args.index, args.workers, args.settle)):
        print(f"worker {number}: RSS {rss:.0f} MB, PSS {pss:.0f} MB, USS {uss:.0f} MB")


if __name__ == "__main__":
    main()
