"""The servers the protocol benchmark spawns: rcpkit, the reference SDK, a bare echo loop.

Each serves the same three things over stdio: ``ping``, a trivial gated
``retrieve`` answering one fixed hit, and ``x-bench/slow`` (or ``rerank`` for
the reference) that waits ``seconds`` on I/O before answering.

    python -m rcpkit_bench.stdio_servers rcpkit|reference|echo
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any

HIT = {"id": "d1", "score": 1.0, "text": "fixed"}


def serve_rcpkit() -> None:
    from rcpkit.server.app import App

    app = App("bench-rcpkit", "1")

    @app.retrieve(max_k=10, modes=["sparse"], mode="inline")
    def retrieve(_params: Any) -> dict[str, Any]:
        return {"hits": [HIT]}

    @app.rerank(methods=["colbert"])
    async def rerank(params: Any) -> dict[str, Any]:
        # Stands in for a backend call: the server must keep serving meanwhile.
        await asyncio.sleep(float(params.model or 2))
        return {"scores": [0.0]}

    app.run_stdio()


def serve_reference() -> None:
    import rcp

    server = rcp.Server()
    server.set_info("bench-reference", "1")
    server.advertise(rcp.Capability.Retrieve, {"maxK": 10, "modes": ["sparse"]})
    server.advertise(rcp.Capability.Rerank, {"methods": ["colbert"]})
    server.on("retrieve", lambda _params: {"hits": [HIT]})

    def rerank(params: dict[str, Any]) -> dict[str, Any]:
        time.sleep(float(params.get("model") or 2))
        return {"scores": [0.0]}

    server.on("rerank", rerank)
    server.serve_stdio()


async def _echo() -> None:
    # The floor: read a line, parse it, answer it, with nothing else in between.
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    while line := await reader.readline():
        message = json.loads(line)
        if "id" not in message:
            continue
        result: dict[str, Any] = {}
        if message["method"] == "retrieve":
            result = {"hits": [HIT]}
        elif message["method"] == "initialize":
            result = {
                "protocolVersion": 1,
                "server": {"name": "echo", "version": "1"},
                "capabilities": {"retrieve": {}},
            }
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        transport.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")


def serve_echo() -> None:
    asyncio.run(_echo())


SERVERS: dict[str, Callable[[], None]] = {
    "rcpkit": serve_rcpkit,
    "reference": serve_reference,
    "echo": serve_echo,
}

if __name__ == "__main__":
    SERVERS[sys.argv[1]]()
