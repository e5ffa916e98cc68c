"""The stdio transport (§5.1): NDJSON on stdin/stdout, nothing else on stdout."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import BinaryIO

from rcpkit import codec
from rcpkit.codec import Frame, Invalid
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.transport.framing import LineSplitter, Oversized

__all__ = ["DEFAULT_MAX_LINE_BYTES", "WRITE_BUFFER_HIGH_WATER", "StreamTransport", "open_stdio"]

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
_READ_SIZE = 256 * 1024
# Above this many unwritten bytes the transport stops reading input until the
# peer catches up (output then stays within this plus one chunk's answers and
# the in-flight requests' answers, which the dispatcher caps).
WRITE_BUFFER_HIGH_WATER = 1024 * 1024


class StreamTransport:
    """NDJSON over a pair of byte streams (a child's pipes, or our own stdio).

    Outgoing messages queued in one event-loop turn are written with one
    ``write`` (coalescing keeps pipelined throughput high without delaying
    anyone: the flush runs as soon as the current turn ends).
    """

    def __init__(
        self,
        read: Callable[[int], Awaitable[bytes]],
        write: Callable[[bytes], None],
        drain: Callable[[], Awaitable[None]] | None = None,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        close: Callable[[], None] | None = None,
        backpressure: bool = False,
        flush_fully: Callable[[], None] | None = None,
    ) -> None:
        self._read = read
        # Server side only: a client's reader must never wait on its own writes
        # (its peer may be waiting for it to read: a deadlock).
        self._backpressure = backpressure
        # Makes the next drain wait for an empty buffer, not just a low one.
        self._flush_fully = flush_fully
        self._write = write
        self._drain_writer = drain
        self._close = close
        self._splitter = LineSplitter(max_line_bytes)
        self._pending: list[bytes] = []
        self._flush_scheduled = False
        self._closed = False

    async def frames(self) -> AsyncIterator[Frame]:
        while True:
            # Answers to the frames of the last chunk go out before we wait again.
            self._flush()
            # Back-pressure: while the peer is not reading our output (the write
            # buffer is above its high-water mark) we read no more input, so a
            # client that never reads stdout cannot grow our memory without bound.
            await self._writable()
            try:
                chunk = await self._read(_READ_SIZE)
            except (ConnectionError, OSError):
                chunk = b""
            items = self._splitter.feed(chunk) if chunk else self._splitter.finish()
            for item in items:
                yield _decode_line(item)
            if not chunk:
                return

    def send(self, data: bytes) -> None:
        if self._closed:
            return
        self._pending.append(data)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if not self._pending or self._closed:
            return
        # §5.1: each message is one line terminated by a single "\n".
        self._pending.append(b"")
        data = b"\n".join(self._pending)
        self._pending.clear()
        try:
            self._write(data)
        except (ConnectionError, OSError, RuntimeError):
            self._closed = True  # the peer went away; nothing more can be said

    async def _writable(self) -> None:
        if not self._backpressure or self._drain_writer is None or self._closed:
            return
        try:
            await self._drain_writer()
        except (ConnectionError, OSError, RuntimeError):
            self._closed = True

    async def drain(self) -> None:
        self._flush()
        if self._drain_writer is not None and not self._closed:
            try:
                await self._drain_writer()
            except (ConnectionError, OSError):
                self._closed = True

    async def close(self) -> None:
        # §5.1: on EOF every answer is flushed before exit. A drain alone returns at
        # the low-water mark; what is still buffered then would die with the process.
        if self._flush_fully is not None and not self._closed:
            self._flush_fully()
        await self.drain()
        self._closed = True
        if self._close is not None:
            self._close()


def _decode_line(item: bytes | Oversized) -> Frame:
    if isinstance(item, Oversized):
        return Invalid(
            None,
            RCPError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                "message exceeds the line size limit",
                extra={"size": item.size},
            ),
        )
    return codec.decode(item)


async def open_stdio(
    stdin: BinaryIO, stdout: BinaryIO, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> StreamTransport:
    """A transport over this process's stdin/stdout (pipes, ttys or plain files)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_SIZE)
    fd = stdin.fileno()

    def read_file(size: int) -> Awaitable[bytes]:
        return loop.run_in_executor(None, os.read, fd, size)

    read: Callable[[int], Awaitable[bytes]] = reader.read
    if _is_stream(fd):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    else:
        # Regular files, ttys and character devices (/dev/null) cannot be handed to
        # uvloop's pipe transport (it aborts the process rather than raising): read
        # them in a thread; os.read returning b"" is EOF, which ends the session.
        read = read_file
    fd_out = stdout.fileno()
    if not _is_stream(fd_out):
        # Same for output. A blocking write of each coalesced batch keeps the
        # transport's contract: nothing is ever buffered (so the back-pressure
        # bound holds trivially) and everything is written before close returns.
        return StreamTransport(
            read, lambda data: _write_all(fd_out, data), max_line_bytes=max_line_bytes
        )
    transport, protocol = await loop.connect_write_pipe(lambda: _DrainableProtocol(loop), stdout)
    transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH_WATER)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return StreamTransport(
        read,
        writer.write,
        writer.drain,
        max_line_bytes=max_line_bytes,
        close=transport.close,
        backpressure=True,
        flush_fully=lambda: transport.set_write_buffer_limits(high=0),
    )


def _is_stream(fd: int) -> bool:
    """A pipe or a socket: what the event loop's pipe transports accept everywhere."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _DrainableProtocol(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """Write-side protocol that supports ``StreamWriter.drain`` back-pressure."""
