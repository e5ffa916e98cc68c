"""An in-memory transport pair: a server-side Transport and the raw peer end of it.

The server side is the real NDJSON :class:`StreamTransport`, so tests through
it exercise the same framing as stdio, without a process.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from rcpkit.transport.framing import LineSplitter
from rcpkit.transport.stdio import DEFAULT_MAX_LINE_BYTES, StreamTransport

__all__ = ["MemoryPeer", "memory_pair"]


class MemoryPeer:
    """The client end: write raw bytes, read whole decoded messages."""

    def __init__(self, inbound: asyncio.Queue[bytes], outbound: asyncio.Queue[bytes]) -> None:
        self._to_server = inbound
        self._from_server = outbound
        self._splitter = LineSplitter(1 << 62)
        self._ready: list[bytes] = []

    def write(self, data: bytes | str) -> None:
        """Send raw bytes (use ``send`` for one JSON message)."""
        self._to_server.put_nowait(data.encode() if isinstance(data, str) else data)

    def send(self, message: Any) -> None:
        """Send one message (a dict or list) as one NDJSON line."""
        self.write(msgspec.json.encode(message) + b"\n")

    def close(self) -> None:
        """End of input: the server sees EOF."""
        self._to_server.put_nowait(b"")

    async def recv_line(self, timeout: float = 5.0) -> bytes:
        while not self._ready:
            chunk = await asyncio.wait_for(self._from_server.get(), timeout)
            if not chunk:
                raise EOFError("server closed its output")
            self._ready.extend(
                line for line in self._splitter.feed(chunk) if isinstance(line, bytes)
            )
        return self._ready.pop(0)

    async def recv(self, timeout: float = 5.0) -> Any:
        return msgspec.json.decode(await self.recv_line(timeout))

    async def request(self, id: Any, method: str, params: Any = None, timeout: float = 5.0) -> Any:
        """Send one request and return the next message (tests keep one in flight)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.recv(timeout)

    def pending(self) -> bool:
        """Whether output is waiting to be read (for asserting silence)."""
        return bool(self._ready) or not self._from_server.empty()


def memory_pair(max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> tuple[StreamTransport, MemoryPeer]:
    inbound: asyncio.Queue[bytes] = asyncio.Queue()
    outbound: asyncio.Queue[bytes] = asyncio.Queue()

    async def read(_size: int) -> bytes:
        return await inbound.get()

    transport = StreamTransport(
        read,
        outbound.put_nowait,
        max_line_bytes=max_line_bytes,
        close=lambda: outbound.put_nowait(b""),
    )
    return transport, MemoryPeer(inbound, outbound)
