"""``rcpkit bench protocol``: stdio throughput, head-of-line blocking and cold start.

All figures come from one run on this machine and are reported as ratios
against baselines measured in the same run (the reference SDK's serial
server and a bare asyncio NDJSON echo loop), because absolute numbers on a
shared 2-core machine are noisy.
"""

from __future__ import annotations

import importlib.util
import os
import select
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from rcpkit_bench.report import Figure, Scale

__all__ = ["run"]

_SERVERS = ("rcpkit", "reference", "echo")


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    buffer: bytes = b""

    @classmethod
    def spawn(cls, kind: str) -> _Child:
        command = [sys.executable, "-m", "rcpkit_bench.stdio_servers", kind]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        child = cls(process)
        child.write(_request(0, "initialize", '{"protocolVersion":1}'))
        child.read_lines(1)
        return child

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        os.write(self.process.stdin.fileno(), data)

    def read_lines(self, count: int, timeout: float = 30.0) -> list[bytes]:
        """Block until ``count`` whole lines arrived; return them."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        lines: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(lines) < count:
            if b"\n" not in self.buffer:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    raise TimeoutError("server stopped answering")
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError("server exited")
                self.buffer += chunk
            *complete, self.buffer = self.buffer.split(b"\n")
            for line in complete:
                if line:
                    lines.append(line)
        if len(lines) > count:  # keep surplus for the next call
            self.buffer = b"\n".join([*lines[count:], self.buffer])
            lines = lines[:count]
        return lines

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _request(id: int, method: str, params: str = "{}") -> bytes:
    return f'{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}\n'.encode()


def _throughput(child: _Child, method: str, params: str, window: int, total: int) -> float:
    """Requests/second with ``window`` requests kept in flight."""
    requests = [_request(i + 1, method, params) for i in range(total)]
    started = time.perf_counter()
    sent = min(window, total)
    child.write(b"".join(requests[:sent]))
    received = 0
    while received < total:
        got = len(child.read_lines(1)) + _drain_ready(child)
        received += got
        more = requests[sent : sent + got]
        if more:
            child.write(b"".join(more))
            sent += len(more)
    return total / (time.perf_counter() - started)


def _drain_ready(child: _Child) -> int:
    """Count lines already buffered (they arrived with the last read)."""
    count = child.buffer.count(b"\n")
    if count:
        *_, child.buffer = child.buffer.split(b"\n")
    return count


def _head_of_line(child: _Child, slow_seconds: float, pings: int) -> tuple[float, float]:
    """p50/p99 ping latency (ms) while one slow request is in flight."""
    child.write(
        _request(10_000_000, "rerank", f'{{"query":"q","passages":["p"],"model":"{slow_seconds}"}}')
    )
    latencies = []
    slow_answered = False
    for i in range(pings):
        started = time.perf_counter()
        child.write(_request(20_000_000 + i, "ping"))
        while True:
            (line,) = child.read_lines(1, timeout=slow_seconds + 30)
            if b'"id":10000000' in line:
                slow_answered = True
                continue
            break
        latencies.append((time.perf_counter() - started) * 1000)
        if slow_answered:
            break
    if not slow_answered:
        child.read_lines(1, timeout=slow_seconds + 30)
    latencies.sort()
    return _percentile(latencies, 50), _percentile(latencies, 99)


def _percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def _cold_start(command: list[str], runs: int) -> float:
    """Median ms from spawn to the first ``initialize`` answer."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        child = _Child(process)
        child.write(_request(1, "initialize", '{"protocolVersion":1}'))
        child.read_lines(1)
        times.append((time.perf_counter() - started) * 1000)
        child.close()
    return statistics.median(times)


# Per scale: requests per throughput cell, the slow request's seconds, pings
# while it runs, cold starts.
_SCALES: dict[Scale, tuple[int, float, int, int]] = {
    "full": (40_000, 2.0, 1000, 7),
    "quick": (5_000, 1.0, 200, 3),
    "smoke": (400, 0.2, 20, 1),
}
_CELLS = (
    ("ping", "{}", 1),
    ("ping", "{}", 64),
    ("retrieve", '{"query":"q","k":1}', 1),
    ("retrieve", '{"query":"q","k":1}', 64),
)
_BASELINES = {"reference": "reference SDK rcp.Server", "echo": "bare asyncio echo loop"}


def run(scale: Scale = "full") -> list[Figure]:
    """Run the suite; one row per measure against each baseline measured in the same run."""
    servers = [
        kind
        for kind in _SERVERS
        if kind != "reference" or importlib.util.find_spec("rcp") is not None
    ]
    total, slow, pings, runs = _SCALES[scale]
    rates: dict[str, list[float]] = {}
    for kind in servers:
        child = _Child.spawn(kind)
        cells = []
        for method, params, window in _CELLS:
            count = total // 8 if window == 1 else total
            cells.append(_throughput(child, method, params, window, count))
        child.close()
        rates[kind] = cells
    figures = [
        Figure(
            "protocol",
            f"stdio {method}, {window} in flight",
            rates["rcpkit"][cell],
            "req/s",
            _BASELINES[kind],
            rates[kind][cell],
        )
        for cell, (method, _, window) in enumerate(_CELLS)
        for kind in ("reference", "echo")
        if kind in rates
    ]

    latency: dict[str, tuple[float, float]] = {}
    for kind in servers:
        if kind == "echo":
            continue
        child = _Child.spawn(kind)
        latency[kind] = _head_of_line(child, slow, pings)
        child.close()
    p50, p99 = latency["rcpkit"]
    theirs = latency.get("reference")
    figures.append(
        Figure(
            "protocol",
            f"stdio ping p99 while one {slow:g} s request is in flight",
            p99,
            "ms",
            _BASELINES["reference"] if theirs else "",
            theirs[1] if theirs else None,
            higher_is_better=False,
            note=f"p50 {p50:.2f} ms" + (f" vs {theirs[0]:.2f} ms" if theirs else ""),
        )
    )

    python = _cold_start([sys.executable, "-m", "rcpkit_bench.stdio_servers", "echo"], runs)
    rcpkit = _cold_start(
        [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword", "--sample"],
        runs,
    )
    figures.append(
        Figure(
            "protocol",
            "stdio cold start to the first initialize answer (median)",
            rcpkit,
            "ms",
            "bare asyncio echo loop (interpreter floor)",
            python,
            higher_is_better=False,
            note=f"`rcpkit serve --stdio --engine keyword --sample`, {runs} run(s)",
        )
    )
    return figures
