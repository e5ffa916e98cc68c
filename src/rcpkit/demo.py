"""``rcpkit demo``: index the bundled samples, then a real stdio session, printed.

It runs ``rcpkit index`` on the sample corpus into a fresh index folder,
spawns ``rcpkit serve --stdio`` on it, initializes, retrieves (hybrid, with
progress) and shuts down, speaking raw NDJSON JSON-RPC so every step shows.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import tempfile
import textwrap
import time
from importlib import resources
from typing import Any

import msgspec

__all__ = ["DEFAULT_QUERY", "run_demo"]

DEFAULT_QUERY = "how does rank fusion combine lexical and dense results"


class _LineSession:
    """Just enough client to show the wire: send a request, print frames until its answer."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self._ids = itertools.count(1)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        id = next(self._ids)
        frame = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        print(f"→ {method} {_short(params)}")
        self._process.stdin.write(msgspec.json.encode(frame) + b"\n")
        await self._process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self._process.stdout.readline(), 30)
            if not line:
                raise RuntimeError("the server closed its output")
            message: dict[str, Any] = msgspec.json.decode(line)
            if message.get("method") == "notifications/progress":
                update = message["params"]
                print(
                    f"  · progress {update['progress']:>4.0%} {update.get('stage', '')}"
                    f" {update.get('message', '')}"
                )
                continue
            if message.get("id") == id:
                return message


def _short(params: dict[str, Any]) -> str:
    text = msgspec.json.encode(params).decode()
    return text if len(text) < 110 else text[:107] + "..."


async def run_demo(query: str = DEFAULT_QUERY) -> int:
    """Index the samples into a temporary index and query it; returns the exit code."""
    with tempfile.TemporaryDirectory(prefix="rcpkit-demo-") as folder:
        samples = str(resources.files("rcpkit") / "samples")
        index = ["--index", folder]
        # Issue 52: a new user took the demo's index for one they could query later.
        print(f"# a temporary index: {folder} is deleted when the demo ends")
        print("# (`rcpkit index PATH` builds one that stays: see `rcpkit index --help`)")
        print(f"$ rcpkit index {samples} --index {folder}")
        indexed = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "rcpkit", "index", samples, *index
        )
        if await indexed.wait() != 0:
            return 1
        print()
        return await _session(query, [sys.executable, "-m", "rcpkit", "serve", "--stdio", *index])


async def _session(query: str, command: list[str]) -> int:
    print(f"$ rcpkit {' '.join(command[3:])}")
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    session = _LineSession(process)
    hello = await session.call(
        "initialize",
        {"protocolVersion": 1, "client": {"name": "rcpkit-demo", "version": "1"}},
    )
    result = hello["result"]
    print(
        f"← {result['server']['name']} {result['server']['version']}, protocol "
        f"{result['protocolVersion']}, conformance {result['_meta']['conformance']}, "
        f"{(time.perf_counter() - started) * 1000:.0f} ms after spawn"
    )
    print(f"  capabilities: {', '.join(sorted(result['capabilities']))}")
    answer = await session.call(
        "retrieve",
        {"query": query, "k": 3, "mode": "hybrid", "_meta": {"progressToken": "demo"}},
    )
    _print_hits(answer)
    done = await session.call("shutdown", {})
    print(f"← {done.get('result')}")
    code = await asyncio.wait_for(process.wait(), 10)
    print(f"server exited with code {code}")
    return code


def _print_hits(answer: dict[str, Any]) -> None:
    if "error" in answer:
        print(f"← error {answer['error']}")
        return
    result = answer["result"]
    print(
        f"← {len(result['hits'])} hits (index version {result.get('indexVersion')}, "
        f"{result.get('usage', {}).get('latencyMs')} ms)"
    )
    for rank, hit in enumerate(result["hits"], 1):
        citation = hit.get("citation", {})
        span = f"{citation.get('start')}:{citation.get('end')}"
        print(
            f"  {rank}. {hit['id']:<22} score {hit['score']:.4f}  {citation.get('title', '')}"
            f"  [{citation.get('source')} {span}]"
        )
        body = " ".join(hit.get("text", "").split())
        print(textwrap.indent(textwrap.shorten(body, 200), "     "))
