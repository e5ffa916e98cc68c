"""A small HTTP/1.1 keep-alive client on asyncio streams, for the campaign suites.

Cheap enough that 64 of them (or 2,000 idle ones) on one core leave the
server the other core; it speaks just what ``rcpkit serve --http`` answers:
a ``Content-Length`` body or a chunked one (an SSE stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Answer", "Connection", "Latencies", "rpc_body"]


@dataclass
class Answer:
    status: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One keep-alive connection to ``url`` (the server's base URL)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        self.host, self.port, self.base = parts.hostname, parts.port, parts.path
        self._extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> Connection:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def post(self, method: str, body: bytes, *, events: bool = False) -> Answer:
        """POST ``<base>/<method>``; an SSE answer comes back as its raw frames."""
        if self._writer is None:
            await self.open()
        assert self._reader is not None and self._writer is not None
        accept = "Accept: text/event-stream\r\n" if events else ""
        head = (
            f"POST {self.base}/{method} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{accept}{self._extra}\r\n"
        )
        self._writer.write(head.encode() + body)
        return await self._answer()

    async def _answer(self) -> Answer:
        assert self._reader is not None
        lines = (await self._reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(b":") for line in lines[1:] if line)
        }
        if headers.get(b"transfer-encoding") == b"chunked":
            body = await self._chunked()
        else:
            body = await self._reader.readexactly(int(headers.get(b"content-length", b"0")))
        if headers.get(b"connection") == b"close":
            await self.close()
        return Answer(status, body)

    async def _chunked(self) -> bytes:
        assert self._reader is not None
        chunks: list[bytes] = []
        while True:
            size = int((await self._reader.readline()).strip(), 16)
            chunk = await self._reader.readexactly(size + 2)
            if size == 0:
                return b"".join(chunks)
            chunks.append(chunk[:-2])

    async def close(self) -> None:
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


@dataclass
class Latencies:
    """Seconds per call, and the calls that failed."""

    samples: list[float] = field(default_factory=list)
    errors: int = 0

    def add(self, started: float) -> None:
        self.samples.append(time.perf_counter() - started)

    def percentile_ms(self, fraction: float) -> float:
        if not self.samples:
            return float("nan")
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] * 1000


def rpc_body(id: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}
    return json.dumps(message, separators=(",", ":")).encode()
