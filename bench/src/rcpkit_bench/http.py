"""The HTTP benchmark: ``rcpkit serve --http`` against the reference SDK's ``serve_http``.

A real load generator (``wrk``, a C program, with a Lua script for the POST
body) drives each server from its own process; the server is pinned to CPU 0
and every client to CPU 1, so on a 2-core machine the client never steals the
server's core. Scenarios, one run:

1. a trivial call (``ping``, ``info``) on 16 keep-alive connections (and on 1);
2. a handler that waits 20 ms on I/O (a backend call), 16 connections;
3. p50/p99 latency for each (from wrk's histogram);
4. SSE streams held open at once, plus ``ping`` latency while they are open.

    rcpkit bench http [--quick]       (or: python benchmarks/http_server.py [--quick])
    python -m rcpkit_bench.http serve rcpkit|reference     (the servers it spawns)
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rcpkit_bench.report import BenchUnavailable, Figure, Scale

__all__ = ["run"]

_SERVER_CPU = 0
_CLIENT_CPU = 1
_SLOW_SECONDS = 0.020


# --- the servers under test (run as children) ---


def _serve_rcpkit_bench() -> None:
    """rcpkit with a 20 ms I/O handler and a streaming handler held until released."""
    from rcpkit.server.app import App
    from rcpkit.server.context import RequestContext
    from rcpkit.transport.http import HttpConfig, Listen, run_http

    app = App("bench-rcpkit-http", "1")
    app.advertise("streaming")
    release = asyncio.Event()

    @app.retrieve(max_k=10, modes=["sparse"])
    async def retrieve(params: Any, ctx: RequestContext) -> dict[str, Any]:
        if params.query == "slow":
            await asyncio.sleep(_SLOW_SECONDS)  # stands in for a backend call
        elif params.query == "hold":
            ctx.progress(0.1, "recall", "held open")
            async with asyncio.timeout(120):
                await release.wait()
        return {"hits": [{"id": "d1", "score": 1.0}]}

    @app.method("x-bench/release", capability={})
    async def release_all(_params: Any) -> dict[str, Any]:
        release.set()
        return {}

    # Limits off: the benchmark is the only caller and opens thousands of streams.
    config = HttpConfig(max_concurrent=None, max_inflight=None)
    run_http(app.server, config, Listen(port=0))


def _serve_reference() -> None:
    """The reference SDK server; it announces its port from inside ``listen``."""
    import socket

    import rcp

    listen = socket.socket.listen

    def announcing_listen(self: socket.socket, *args: Any) -> None:
        listen(self, *args)
        port = self.getsockname()[1]
        print(f"serving RCP over HTTP on http://127.0.0.1:{port}/rcp", file=sys.stderr, flush=True)

    socket.socket.listen = announcing_listen  # type: ignore[method-assign, assignment]
    server = rcp.Server()
    server.set_info("bench-reference", "1")
    server.advertise(rcp.Capability.Retrieve, {"maxK": 10, "modes": ["sparse"]})

    def retrieve(params: dict[str, Any]) -> dict[str, Any]:
        if params.get("query") == "slow":
            time.sleep(_SLOW_SECONDS)  # the same backend call, as the SDK can make it
        return {"hits": [{"id": "d1", "score": 1.0}]}

    server.on("retrieve", retrieve)
    server.serve_http(0)


def _serve_floor() -> None:
    """The floor: a no-op ASGI app on the same uvicorn setup — what HTTP alone costs."""
    from rcpkit.server.runner import run_async
    from rcpkit.transport.http import Listen
    from rcpkit.transport.http.serve import serve_asgi

    pong = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(pong))]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": pong})

    run_async(serve_asgi(app, Listen(port=0), base="/rcp"))


# --- children ---


@dataclass
class _Child:
    process: subprocess.Popen[bytes]
    url: str

    @classmethod
    def spawn(
        cls, command: list[str], env: dict[str, str] | None = None, startup: float = 30.0
    ) -> _Child:
        """Start ``command`` on the server CPU; ``startup``: seconds it may take to listen."""
        process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=lambda: os.sched_setaffinity(0, {_SERVER_CPU}),
        )
        child = cls(process, _announced_url(process, startup))
        # Past start-up nobody reads its log, yet a full pipe (64 KiB) would block
        # the server's next write: the log is drained and dropped from here on.
        threading.Thread(target=_drain, args=(process,), daemon=True).start()
        return child

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)


def _drain(process: subprocess.Popen[bytes]) -> None:
    """Read the server's log until it exits, then close the pipe."""
    assert process.stderr is not None
    with process.stderr:
        while os.read(process.stderr.fileno(), 65536):
            pass


def _announced_url(process: subprocess.Popen[bytes], timeout: float = 30.0) -> str:
    assert process.stderr is not None
    fd = process.stderr.fileno()
    buffer = b""
    deadline = time.monotonic() + timeout
    while True:
        match = re.search(rb"serving RCP over HTTP on (\S+)", buffer)
        if match:
            return match.group(1).decode()
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError("the server never announced its address")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError(f"the server exited: {buffer.decode(errors='replace')}")
        buffer += chunk


def _rcpkit_cli() -> list[str]:
    serve = ["serve", "--http", "127.0.0.1:0", "--engine", "keyword", "--sample"]
    return [sys.executable, "-m", "rcpkit", *serve]


def _bench_server(kind: str) -> list[str]:
    return [sys.executable, "-m", "rcpkit_bench.http", "serve", kind]


# --- load: wrk ---


@dataclass
class _Load:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


_LUA = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[%s]]
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RCPKIT-WRK %%d %%d %%d %%d %%d\\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def _wrk(url: str, method: str, params: str, connections: int, seconds: float) -> _Load:
    body = f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}'
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_LUA % body)
    try:
        command = ["taskset", "-c", str(_CLIENT_CPU), "wrk", "-t1", f"-c{connections}"]
        command += [
            f"-d{round(seconds)}s",
            "--timeout",
            "10s",
            "-s",
            script.name,
            f"{url}/{method}",
        ]
        output = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + 60, check=True
        ).stdout
    finally:
        os.unlink(script.name)
    match = re.search(r"RCPKIT-WRK (\d+) (\d+) (\d+) (\d+) (\d+)", output)
    if match is None:
        raise RuntimeError(f"wrk printed no summary:\n{output}")
    requests, micros, p50, p99, errors = (int(group) for group in match.groups())
    return _Load(requests, micros / 1e6, p50 / 1000, p99 / 1000, errors)


def _post(url: str, method: str, params: dict[str, Any]) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(
        f"{url}/{method}", body, {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


# --- SSE streams held open ---


@dataclass
class _Streams:
    opened: int
    finished: int
    open_seconds: float
    first_frame_p50_ms: float
    first_frame_p99_ms: float


async def _one_stream(url: str, id: int, opened: asyncio.Queue[float]) -> bool:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    params = {"query": "hold", "_meta": {"progressToken": id}}
    body = json.dumps({"jsonrpc": "2.0", "id": id, "method": "retrieve", "params": params})
    started = time.perf_counter()
    writer.write(
        (
            f"POST {parts.path}/retrieve HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}"
        ).encode()
    )
    try:
        await reader.readuntil(b"\r\n\r\n")
        first = await _chunk(reader)
        opened.put_nowait(time.perf_counter() - started)
        final = await _chunk(reader)
        return b"notifications/progress" in first and b'"result"' in final
    finally:
        writer.close()


async def _chunk(reader: asyncio.StreamReader) -> bytes:
    """One chunk of a chunked body: uvicorn writes each SSE frame as one."""
    size = int((await reader.readline()).strip(), 16)
    return (await reader.readexactly(size + 2))[:-2]


async def _hold_streams(child: _Child, count: int, load_seconds: float) -> tuple[_Streams, _Load]:
    opened: asyncio.Queue[float] = asyncio.Queue()
    started = time.perf_counter()
    tasks = [asyncio.create_task(_one_stream(child.url, id, opened)) for id in range(count)]
    delays = []
    async with asyncio.timeout(120):
        for _ in range(count):
            delays.append(await opened.get())
    open_seconds = time.perf_counter() - started
    # Every stream is open: how does a plain call fare meanwhile?
    during = await asyncio.to_thread(_wrk, child.url, "ping", "{}", 16, load_seconds)
    await asyncio.to_thread(_post, child.url, "x-bench/release", {})
    async with asyncio.timeout(120):
        finished = sum(await asyncio.gather(*tasks))
    delays.sort()
    streams = _Streams(
        count,
        finished,
        open_seconds,
        delays[len(delays) // 2] * 1000,
        delays[min(len(delays) - 1, int(len(delays) * 0.99))] * 1000,
    )
    return streams, during


# --- the run ---


@dataclass(frozen=True)
class _Scenario:
    label: str
    method: str
    params: str
    connections: int
    ours: str  # which rcpkit server runs it
    floor: bool  # also measured against the no-op ASGI floor
    target: float | None = None  # the bound on rcpkit ÷ reference


_SCENARIOS = (
    # (1) a trivial call against the real `rcpkit serve --http`
    _Scenario("ping, 16 connections", "ping", "{}", 16, "rcpkit", True, target=1.0),
    _Scenario("info, 16 connections", "info", "{}", 16, "rcpkit", True),
    _Scenario("ping, 1 connection", "ping", "{}", 1, "rcpkit", True, target=1.0),
    # (2) a handler that waits 20 ms on I/O
    _Scenario(
        "20 ms I/O handler, 16 connections", "retrieve", '{"query":"slow"}', 16, "bench", False
    ),
)


@dataclass
class _Row:
    scenario: _Scenario
    ours: _Load
    reference: _Load
    floor: _Load | None


# Per scale: seconds per wrk run, rounds, SSE streams held open, seconds of load meanwhile.
_SCALES: dict[Scale, tuple[float, int, int, float]] = {
    "full": (3.0, 3, 2000, 3.0),
    "quick": (2.0, 1, 500, 2.0),
    "smoke": (1.0, 1, 50, 1.0),
}


def _loads(seconds: float, rounds: int) -> dict[str, _Row]:
    """Every server stays up; each round runs every scenario on each in turn, so the
    machine's background noise falls on all of them alike. The median round counts."""
    commands = {
        "rcpkit": _rcpkit_cli(),
        "bench": _bench_server("rcpkit"),
        "reference": _bench_server("reference"),
        "floor": _bench_server("floor"),
    }
    children = {name: _Child.spawn(command) for name, command in commands.items()}
    try:
        runs: dict[tuple[str, str], list[_Load]] = {}
        for scenario in _SCENARIOS:
            for name in _servers_of(scenario):
                _post(children[name].url, "initialize", {"protocolVersion": 1})
                reply = _post(children[name].url, scenario.method, json.loads(scenario.params))
                assert "result" in reply, (name, reply)  # every call really succeeds
        for _ in range(rounds):
            for scenario in _SCENARIOS:
                for name in _servers_of(scenario):
                    load = _wrk(
                        children[name].url,
                        scenario.method,
                        scenario.params,
                        scenario.connections,
                        seconds,
                    )
                    runs.setdefault((scenario.label, name), []).append(load)
    finally:
        for child in children.values():
            child.stop()

    def median(label: str, name: str) -> _Load:
        ordered = sorted(runs[(label, name)], key=lambda load: load.rate)
        return ordered[len(ordered) // 2]

    return {
        s.label: _Row(
            s,
            median(s.label, s.ours),
            median(s.label, "reference"),
            median(s.label, "floor") if s.floor else None,
        )
        for s in _SCENARIOS
    }


def _servers_of(scenario: _Scenario) -> list[str]:
    return [scenario.ours, "reference", *(["floor"] if scenario.floor else [])]


def _figures(results: dict[str, _Row]) -> list[Figure]:
    figures = []
    for label, row in results.items():
        ours, theirs = row.ours, row.reference
        figures.append(
            Figure(
                "http",
                f"HTTP {label}",
                ours.rate,
                "req/s",
                "reference SDK serve_http",
                theirs.rate,
                target=row.scenario.target,
                note=f"p50 / p99 {ours.p50_ms:.2f} / {ours.p99_ms:.2f} ms "
                f"vs {theirs.p50_ms:.2f} / {theirs.p99_ms:.2f} ms; "
                f"errors {ours.errors} / {theirs.errors}",
            )
        )
        if row.floor is not None:
            floor = "no-op ASGI app on the same uvicorn (floor)"
            figures.append(
                Figure("http", f"HTTP {label}", ours.rate, "req/s", floor, row.floor.rate)
            )
    return figures


def _stream_figures(count: int, load_seconds: float) -> list[Figure]:
    child = _Child.spawn(_bench_server("rcpkit"))
    try:
        idle = child.rss_mib()
        streams, during = asyncio.run(_hold_streams(child, count, load_seconds))
        held = child.rss_mib()
    finally:
        child.stop()
    held_open = f"while {streams.opened:,} SSE streams are held open"
    return [
        Figure(
            "http",
            "SSE streams held open at once, answered",
            streams.finished,
            "streams",
            note=f"{streams.opened:,} opened in {streams.open_seconds:.2f} s; "
            "the reference serves one connection at a time, so it holds one",
        ),
        Figure(
            "http",
            "SSE first progress frame p50",
            streams.first_frame_p50_ms,
            "ms",
            higher_is_better=False,
            note=f"p99 {streams.first_frame_p99_ms:.1f} ms",
        ),
        Figure(
            "http",
            f"HTTP ping, 16 connections, {held_open}",
            during.rate,
            "req/s",
            note=f"p50 / p99 {during.p50_ms:.2f} / {during.p99_ms:.2f} ms; {during.errors} errors",
        ),
        Figure(
            "http",
            f"server RSS {held_open}",
            held,
            "MiB",
            "the same server idle",
            idle,
            higher_is_better=False,
        ),
    ]


def run(scale: Scale = "full") -> list[Figure]:
    """Run the suite (server on CPU 0, every client on CPU 1); one row per measure."""
    if shutil.which("wrk") is None or shutil.which("taskset") is None:
        raise BenchUnavailable("needs `wrk` and `taskset` (apt-get install wrk util-linux)")
    seconds, rounds, streams, load_seconds = _SCALES[scale]
    _raise_file_limit()
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_CLIENT_CPU})
    try:
        return _figures(_loads(seconds, rounds)) + _stream_figures(streams, load_seconds)
    finally:
        os.sched_setaffinity(0, affinity)  # the next suite gets every core back


def _raise_file_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        servers = {"rcpkit": _serve_rcpkit_bench, "reference": _serve_reference}
        {**servers, "floor": _serve_floor}[sys.argv[2]]()
    else:  # the same as `rcpkit bench http ...` (the CLI sits above this package)
        os.execv(sys.executable, [sys.executable, "-m", "rcpkit", "bench", "http", *sys.argv[1:]])
