"""Campaign R3, load: ``rcpkit serve --http`` under many callers, idle crowds and attacks.

Three phases against the real CLI server (keyword engine, sample corpus, one
write token, every limit at its default), each on loopback and bounded in time:

1. mixed load: N concurrent keep-alive clients for T seconds, each looping
   over retrieve, SSE retrieve, ping and index/add (upserts over a bounded id
   space); every answer must be a 200 JSON-RPC result. Server RSS is sampled
   each second: after warm-up (the first fifth) it must stay flat.
2. idle crowd: thousands of keep-alive connections held open while ``ping``
   still answers on a few more; then every held connection is asked again.
3. attacks, with ``ping`` measured meanwhile from another caller: slow bodies
   (``Content-Length: 100`` then 10 bytes, held) and endless headers streamed
   without credentials. Neither may deny service to anyone else.

    rcpkit bench load [--quick|--smoke]
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

from rcpkit_bench.http import _CLIENT_CPU, _Child, _raise_file_limit
from rcpkit_bench.loopback import Connection, Latencies, rpc_body
from rcpkit_bench.report import Figure, Scale

__all__ = ["run"]

_TOKEN = "load-bench-token"
_AUTH = {"Authorization": f"Bearer {_TOKEN}"}
_OTHER = {"Authorization": "Bearer load-bench-other-caller"}  # the attacks' bystander
_WORDS = ("fusion", "sparse", "rerank", "hybrid", "index", "cursor", "dense", "query", "graph")


@dataclass(frozen=True)
class _Plan:
    clients: int
    seconds: float
    idle: int
    slow_bodies: int
    header_attackers: int
    probe_seconds: float


_SCALES: dict[Scale, _Plan] = {
    "full": _Plan(64, 60.0, 2000, 1024, 16, 5.0),
    "quick": _Plan(64, 15.0, 1000, 512, 8, 3.0),
    "smoke": _Plan(8, 2.0, 50, 32, 2, 1.0),
}


# --- phase 1: mixed load ---


@dataclass
class _Mix:
    by_op: dict[str, Latencies]
    rss: list[tuple[float, float]]  # (seconds since start, MiB)
    seconds: float
    failures: list[str]


async def _client(url: str, number: int, until: float, mix: _Mix) -> None:
    rng = random.Random(number)
    connection = await Connection(url, _AUTH).open()
    calls = 0
    try:
        while time.perf_counter() < until:
            calls += 1
            draw = rng.random()
            op = (
                "ping"
                if draw < 0.3
                else "retrieve"
                if draw < 0.75
                else "sse retrieve"
                if draw < 0.9
                else "index/add"
            )
            started = time.perf_counter()
            try:
                ok = await _one_call(connection, op, number, calls, rng)
            except (OSError, asyncio.IncompleteReadError, ValueError) as error:
                ok = False
                mix.failures.append(f"{op}: {error!r}")
                await connection.close()
            if ok:
                mix.by_op[op].add(started)
            else:
                mix.by_op[op].errors += 1
    finally:
        await connection.close()


async def _one_call(
    connection: Connection, op: str, number: int, calls: int, rng: random.Random
) -> bool:
    id = f"{number}-{calls}"
    if op == "ping":
        answer = await connection.post("ping", rpc_body(id, "ping"))
        return answer.status == 200 and "result" in answer.json()
    if op == "index/add":
        document = {"id": f"load-{number}-{calls % 20}", "text": " ".join(rng.sample(_WORDS, 4))}
        body = rpc_body(id, "index/add", {"documents": [document]})
        answer = await connection.post("index/add", body)
        return answer.status == 200 and "result" in answer.json()
    params: dict[str, Any] = {"query": rng.choice(_WORDS), "k": 5}
    if op == "retrieve":
        answer = await connection.post("retrieve", rpc_body(id, "retrieve", params))
        return answer.status == 200 and "result" in answer.json()
    params["_meta"] = {"progressToken": id}
    answer = await connection.post("retrieve", rpc_body(id, "retrieve", params), events=True)
    final = answer.body.rstrip(b"\n").rsplit(b"\n\n", 1)[-1]
    return answer.status == 200 and final.startswith(b"data: ") and b'"result"' in final


async def _mixed(child: _Child, plan: _Plan) -> _Mix:
    ops = ("ping", "retrieve", "sse retrieve", "index/add")
    mix = _Mix({op: Latencies() for op in ops}, [], plan.seconds, [])
    started = time.perf_counter()
    until = started + plan.seconds

    async def sample_rss() -> None:
        while time.perf_counter() < until:
            mix.rss.append((time.perf_counter() - started, child.rss_mib()))
            await asyncio.sleep(1.0)  # a sampling period, not a wait for something

    sampler = asyncio.create_task(sample_rss())
    async with asyncio.timeout(plan.seconds + 60):
        await asyncio.gather(*(_client(child.url, n, until, mix) for n in range(plan.clients)))
    await sampler
    mix.rss.append((time.perf_counter() - started, child.rss_mib()))
    return mix


# --- phase 2: an idle crowd ---


async def _pings(url: str, connections: int, seconds: float, headers: dict[str, str]) -> Latencies:
    """Ping as fast as ``connections`` keep-alive clients can for ``seconds``."""
    result = Latencies()
    until = time.perf_counter() + seconds

    async def one(number: int) -> None:
        connection = Connection(url, headers)
        try:
            while time.perf_counter() < until:
                started = time.perf_counter()
                try:
                    answer = await connection.post("ping", rpc_body(number, "ping"))
                    if answer.status == 200:
                        result.add(started)
                        continue
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    await connection.close()
                result.errors += 1
        finally:
            await connection.close()

    async with asyncio.timeout(seconds + 30):
        await asyncio.gather(*(one(n) for n in range(connections)))
    return result


@dataclass
class _Crowd:
    held: int
    answered_after: int
    meanwhile: Latencies
    rss_before: float
    rss_holding: float


async def _idle_crowd(child: _Child, plan: _Plan) -> _Crowd:
    rss_before = child.rss_mib()
    crowd = [Connection(child.url, _AUTH) for _ in range(plan.idle)]
    async with asyncio.timeout(120):
        for start in range(0, len(crowd), 200):  # no SYN flood against our own backlog
            batch = crowd[start : start + 200]
            await asyncio.gather(*(c.post("ping", rpc_body(1, "ping")) for c in batch))
    rss_holding = child.rss_mib()
    meanwhile = await _pings(child.url, 4, plan.probe_seconds * 2, _AUTH)

    async def still_answers(connection: Connection) -> bool:
        try:
            return (await connection.post("ping", rpc_body(2, "ping"))).status == 200
        except (OSError, asyncio.IncompleteReadError, ValueError):
            return False

    try:
        async with asyncio.timeout(120):
            answered = 0
            for start in range(0, len(crowd), 200):
                batch = crowd[start : start + 200]
                answered += sum(await asyncio.gather(*(still_answers(c) for c in batch)))
    finally:
        await asyncio.gather(*(c.close() for c in crowd))
    return _Crowd(plan.idle, answered, meanwhile, rss_before, rss_holding)


# --- phase 3: attacks ---


@dataclass
class _Attack:
    attackers: int
    meanwhile: Latencies
    rss_before: float
    rss_during: float
    largest_sent: int = 0  # header attack: the most bytes one connection got in


async def _slow_bodies(child: _Child, plan: _Plan) -> _Attack:
    rss_before = child.rss_mib()
    writers: list[asyncio.StreamWriter] = []
    head = (
        f"POST {_base(child.url)}/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {_TOKEN}\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    try:
        async with asyncio.timeout(60):
            for _ in range(plan.slow_bodies):
                _reader, writer = await asyncio.open_connection(*_host_port(child.url))
                writer.write(head + b'{"jsonrpc"')  # 10 of the 100 bytes, and no more
                writers.append(writer)
        # Another caller (no shared limits with the attacker but the server's own).
        meanwhile = await _pings(child.url, 4, plan.probe_seconds, _OTHER)
        rss_during = child.rss_mib()
    finally:
        for writer in writers:
            writer.close()
    return _Attack(len(writers), meanwhile, rss_before, rss_during)


async def _big_headers(child: _Child, plan: _Plan) -> _Attack:
    rss_before = child.rss_mib()
    sent = [0] * plan.header_attackers
    stop = asyncio.Event()

    async def stream(number: int) -> None:
        _reader, writer = await asyncio.open_connection(*_host_port(child.url))
        writer.write(f"POST {_base(child.url)}/ping HTTP/1.1\r\nX-Pad: ".encode())
        chunk = b"x" * 65536
        try:
            while not stop.is_set() and sent[number] < 256 * 1024 * 1024:
                writer.write(chunk)
                await writer.drain()
                sent[number] += len(chunk)
        except (OSError, ConnectionError):
            pass  # cut off: the point of the exercise
        finally:
            writer.close()

    attackers = [asyncio.create_task(stream(n)) for n in range(plan.header_attackers)]
    try:
        meanwhile = await _pings(child.url, 4, plan.probe_seconds, _OTHER)
        rss_during = child.rss_mib()
    finally:
        stop.set()
        async with asyncio.timeout(30):
            await asyncio.gather(*attackers)
    return _Attack(len(attackers), meanwhile, rss_before, rss_during, max(sent))


def _host_port(url: str) -> tuple[str, int]:
    connection = Connection(url)
    return connection.host, connection.port


def _base(url: str) -> str:
    return Connection(url).base


# --- the run ---


def _server() -> _Child:
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--engine", "keyword", "--sample"]
    tokens = f"{_TOKEN} {_OTHER['Authorization'].removeprefix('Bearer ')}"
    return _Child.spawn(command, env={**os.environ, "RCPKIT_HTTP_TOKENS": tokens})


async def _campaign(plan: _Plan) -> tuple[_Mix, _Crowd, _Attack, _Attack]:
    child = await asyncio.to_thread(_server)
    try:
        mix = await _mixed(child, plan)
        crowd = await _idle_crowd(child, plan)
    finally:
        await asyncio.to_thread(child.stop)
    attacked = await asyncio.to_thread(_server)  # a fresh server: RSS says what attacks cost
    try:
        slow = await _slow_bodies(attacked, plan)
        big = await _big_headers(attacked, plan)
    finally:
        await asyncio.to_thread(attacked.stop)
    return mix, crowd, slow, big


def run(scale: Scale = "full") -> list[Figure]:
    """Run the campaign (the server on CPU 0, every client on CPU 1)."""
    plan = _SCALES[scale]
    _raise_file_limit()
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {_CLIENT_CPU})
    try:
        mix, crowd, slow, big = asyncio.run(_campaign(plan))
    finally:
        os.sched_setaffinity(0, affinity)
    return _mix_figures(mix, plan) + _crowd_figures(crowd) + _attack_figures(slow, big)


def _mix_figures(mix: _Mix, plan: _Plan) -> list[Figure]:
    calls = sum(len(lat.samples) + lat.errors for lat in mix.by_op.values())
    errors = sum(lat.errors for lat in mix.by_op.values())
    warm = [mib for at, mib in mix.rss if at >= plan.seconds / 5] or [mix.rss[-1][1]]
    label = f"{plan.clients} clients × {plan.seconds:g} s mixed"
    spread = ", ".join(
        f"{op} {len(lat.samples) + lat.errors:,} (p99 {lat.percentile_ms(0.99):.1f} ms)"
        for op, lat in mix.by_op.items()
    )
    ping = mix.by_op["ping"]
    return [
        Figure("load", f"{label}: calls answered", calls / mix.seconds, "req/s", note=spread),
        Figure(
            "load",
            f"{label}: errors",
            errors,
            "calls",
            higher_is_better=False,
            note="; ".join(mix.failures[:3]) or "every answer a 200 JSON-RPC result",
        ),
        Figure(
            "load",
            f"{label}: ping p99",
            ping.percentile_ms(0.99),
            "ms",
            higher_is_better=False,
            note=f"p50 {ping.percentile_ms(0.5):.2f} ms",
        ),
        Figure(
            "load",
            f"{label}: server RSS growth after warm-up",
            max(warm) - warm[0],
            "MiB",
            higher_is_better=False,
            note=f"RSS {warm[0]:.0f} MiB at {plan.seconds / 5:g} s, max {max(warm):.0f}, "
            f"end {warm[-1]:.0f}",
        ),
    ]


def _crowd_figures(crowd: _Crowd) -> list[Figure]:
    held = f"{crowd.held:,} idle keep-alive connections"
    pings = crowd.meanwhile
    return [
        Figure(
            "load",
            f"{held}: still answering afterwards",
            crowd.answered_after,
            "connections",
            note=f"RSS {crowd.rss_before:.0f} → {crowd.rss_holding:.0f} MiB while held",
        ),
        Figure(
            "load",
            f"ping on 4 more connections while {held} are held: p99",
            pings.percentile_ms(0.99),
            "ms",
            higher_is_better=False,
            note=f"{len(pings.samples):,} answered, {pings.errors} errors, "
            f"p50 {pings.percentile_ms(0.5):.2f} ms",
        ),
    ]


def _attack_figures(slow: _Attack, big: _Attack) -> list[Figure]:
    figures = []
    for attack, what in (
        (slow, f"{slow.attackers:,} slow bodies held open"),
        (big, f"{big.attackers} unauthenticated endless headers"),
    ):
        pings = attack.meanwhile
        total = len(pings.samples) + pings.errors
        figures.append(
            Figure(
                "load",
                f"another caller's pings answered during {what}",
                100.0 * len(pings.samples) / total if total else 0.0,
                "%",
                note=f"{total:,} pings, p99 {pings.percentile_ms(0.99):.1f} ms; "
                f"server RSS {attack.rss_before:.0f} → {attack.rss_during:.0f} MiB",
            )
        )
    figures.append(
        Figure(
            "load",
            "endless header: most bytes one connection got in before it was cut off",
            big.largest_sent / 1024,
            "KiB",
            higher_is_better=False,
            note="the head limit is 64 KiB; the rest is socket buffers",
        )
    )
    return figures
