"""``rcpkit demo``: a real stdio session against ``rcpkit serve``, printed for a person.

It spawns the server as a subprocess, initializes, retrieves with progress,
and shuts down, speaking raw NDJSON JSON-RPC so every step is visible.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import textwrap
import time
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


async def run_demo(query: str = DEFAULT_QUERY, command: list[str] | None = None) -> int:
    """Run the demo session; returns the server's exit code."""
    command = command or [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--sample"]
    print(f"$ {' '.join(command[2:] if command[0] == sys.executable else command)}")
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
        "retrieve", {"query": query, "k": 3, "_meta": {"progressToken": "demo"}}
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
        print(
            f"  {rank}. {hit['id']:<18} score {hit['score']:6.3f}  {citation.get('title', '')}"
            f"  [{citation.get('source')}]"
        )
        body = " ".join(line for line in hit.get("text", "").splitlines()[1:] if line)
        print(textwrap.indent(textwrap.shorten(body, 200), "     "))
