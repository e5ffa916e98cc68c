"""End-to-end fixtures: the real ``rcpkit`` CLI as a subprocess over real pipes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest


class StdioServer:
    """A spawned ``rcpkit serve --stdio`` with line-level access to its pipes."""

    def __init__(self, *args: str, launcher: Sequence[str] = ("-m", "rcpkit")) -> None:
        # Protocol-level tests default to the in-memory keyword engine.
        engine = [] if "--engine" in args else ["--engine", "keyword"]
        # ``launcher``: what runs the CLI, ``python -m rcpkit`` unless a test wraps it.
        command = [sys.executable, *launcher, "serve", "--stdio", *engine, *args]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._buffer = b""

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def line(self, timeout: float = 10.0) -> bytes:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError("no answer from the server")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("server closed stdout")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def recv(self, timeout: float = 10.0) -> Any:
        return json.loads(self.line(timeout))

    def request(self, id: Any, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.recv()

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def wait(self, timeout: float = 10.0) -> int:
        return self.process.wait(timeout)

    def rest_of_stdout(self) -> bytes:
        assert self.process.stdout is not None
        return self._buffer + self.process.stdout.read()


@pytest.fixture
def spawn() -> Iterator[Any]:
    servers: list[StdioServer] = []

    def start(*args: str, launcher: Sequence[str] = ("-m", "rcpkit")) -> StdioServer:
        server = StdioServer(*args, launcher=launcher)
        servers.append(server)
        return server

    yield start
    for server in servers:
        if server.process.poll() is None:
            server.process.kill()
        server.process.wait(5)
        for stream in (server.process.stdin, server.process.stdout, server.process.stderr):
            if stream is not None:
                stream.close()
