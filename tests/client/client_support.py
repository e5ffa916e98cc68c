"""Helpers for the client tests: a scripted in-memory server end, and real servers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rcpkit.client import Client, StreamChannel

PYTHON = sys.executable
KEYWORD = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword"]

CAPABILITIES: dict[str, Any] = {
    "retrieve": {"maxK": 50, "modes": ["sparse", "dense"], "fusion": ["rrf"]},
    "rerank": {"methods": ["colbert"]},
    "filter": {"fields": {"lang": "keyword"}, "operators": ["eq"]},
    "index": {"writable": True},
    "streaming": {},
}


class ScriptedServer:
    """The far end of an in-memory channel, driven by the test line by line."""

    def __init__(self) -> None:
        self._to_client: asyncio.Queue[bytes] = asyncio.Queue()
        self._from_client: asyncio.Queue[bytes] = asyncio.Queue()
        self._buffer = b""

    def channel(self) -> StreamChannel:
        async def read(_size: int) -> bytes:
            return await self._to_client.get()

        return StreamChannel(
            read,
            self._from_client.put_nowait,
            description="scripted server",
            close_input=lambda: self._from_client.put_nowait(b""),
        )

    async def recv(self, timeout: float = 30.0) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = await asyncio.wait_for(self._from_client.get(), timeout)
            if not chunk:
                raise EOFError("the client closed its output")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    async def silent(self, seconds: float = 0.1) -> bool:
        try:
            await self.recv(seconds)
        except TimeoutError:
            return True
        return False

    def send(self, message: Any) -> None:
        self._to_client.put_nowait(json.dumps(message).encode() + b"\n")

    def result(self, id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": id, "result": result})

    def error(self, id: Any, code: int, message: str = "no", **data: Any) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": id, "error": error})

    def die(self) -> None:
        self._to_client.put_nowait(b"")


def initialize_result(
    capabilities: dict[str, Any] | None = None, version: int = 1
) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "server": {"name": "scripted", "version": "1"},
        "capabilities": CAPABILITIES if capabilities is None else capabilities,
        "_meta": {"conformance": "L0"},
    }


async def scripted_client(
    capabilities: dict[str, Any] | None = None, **options: Any
) -> tuple[Client, ScriptedServer]:
    """A Client connected to a ScriptedServer that answered initialize."""
    server = ScriptedServer()
    connecting = asyncio.create_task(Client.connect(server.channel(), **options))
    hello = await server.recv()
    assert hello["method"] == "initialize"
    server.result(hello["id"], initialize_result(capabilities))
    return await asyncio.wait_for(connecting, 30), server


async def finish(client: Client, server: ScriptedServer) -> None:
    """Close ``client``, answering its ``shutdown`` as a polite server would."""
    closing = asyncio.create_task(client.close())
    with contextlib.suppress(TimeoutError, EOFError):
        while True:
            message = await server.recv(1.0)
            if message.get("method") == "shutdown":
                server.result(message["id"], {})
                break
    await asyncio.wait_for(closing, 5)


@contextmanager
def announced_http(
    command: Sequence[str], env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run an HTTP server on 127.0.0.1:0 and yield the URL it announces on stderr."""
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    drain: threading.Thread | None = None
    try:
        assert process.stderr is not None
        url = _announced_url(process, timeout)
        drain = threading.Thread(target=process.stderr.read, daemon=True)  # keep it drained
        drain.start()
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        if drain is not None:
            drain.join(5)
        if process.stderr is not None:
            process.stderr.close()


def _announced_url(process: subprocess.Popen[bytes], timeout: float) -> str:
    assert process.stderr is not None
    fd = process.stderr.fileno()
    deadline = time.monotonic() + timeout
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        seen += chunk
        found = re.search(rb"on (http://\S+)", seen)
        if found:
            return found.group(1).decode()
    raise AssertionError(f"the server announced no URL: {seen.decode(errors='replace')}")


def http_server_command(*args: str) -> list[str]:
    return [PYTHON, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0", *args]
