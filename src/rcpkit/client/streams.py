"""NDJSON over a pair of byte streams (§5.1): a spawned server's pipes, or memory queues.

Framing is the runtime's own :class:`StreamTransport`, so the client reads
exactly what a server writes: one JSON message a line, blank lines ignored,
lines split across reads reassembled, over-long lines refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from rcpkit.client.channel import Outgoing, Receiver
from rcpkit.codec import Batch, Invalid
from rcpkit.protocol.base import Id
from rcpkit.transport.stdio import DEFAULT_MAX_LINE_BYTES, StreamTransport

__all__ = ["StreamChannel"]

log = logging.getLogger("rcpkit.client")


class StreamChannel:
    """A channel over ``read``/``write`` byte functions.

    ``read(n)`` returns b"" at end of input. ``close_input`` signals EOF to the
    server (§5.1: EOF is an implicit shutdown). ``ended`` says why the stream
    ended when it does (an exit code, a stderr tail) for the error every
    in-flight call then fails with.
    """

    def __init__(
        self,
        read: Callable[[int], Awaitable[bytes]],
        write: Callable[[bytes], None],
        *,
        description: str,
        drain: Callable[[], Awaitable[None]] | None = None,
        close_input: Callable[[], None] | None = None,
        ended: Callable[[], Awaitable[str]] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self._transport = StreamTransport(
            read, write, drain, max_line_bytes=max_line_bytes, close=close_input
        )
        self._description = description
        self._ended = ended
        self._reader: asyncio.Task[None] | None = None

    @property
    def description(self) -> str:
        return self._description

    async def open(self, receiver: Receiver) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read(receiver))

    async def _read(self, receiver: Receiver) -> None:
        reason = "the server closed its output"
        try:
            async for frame in self._transport.frames():
                members = frame.members if isinstance(frame, Batch) else [frame]
                for member in members:
                    if isinstance(member, Invalid):
                        # §5.1: stdout is protocol-only; a server that breaks that is buggy,
                        # but one bad line must not take the connection down.
                        log.warning("%s sent an undecodable line: %s", self._description, member)
                        continue
                    receiver.deliver(member)
            if self._ended is not None:
                reason = await self._ended()
        except asyncio.CancelledError:
            reason = "the channel was closed"
            raise
        finally:
            receiver.lost(f"{self._description}: {reason}")

    def send(self, message: Outgoing) -> None:
        self._transport.send(message.data)

    def abandon(self, id: Id) -> None:
        """Nothing to free: the request's answer, if it comes, is read and discarded."""

    def renew(self) -> bool:
        """A stream is one session for its lifetime (§13): nothing to renew."""
        return False

    async def close(self) -> None:
        """Flush, then signal end of input; the reader ends when the server's output does."""
        await self._transport.close()

    async def stop_reading(self, timeout: float) -> None:
        """Wait (bounded) for the reader to finish, then cancel it."""
        reader = self._reader
        if reader is None or reader.done():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), timeout)
            return
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
