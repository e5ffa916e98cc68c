"""A client connected to an in-process Server over memory queues (tests, embedding).

The server side is the runtime's real NDJSON transport and dispatcher, so
this exercises the same framing and protocol as stdio, without a process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from rcpkit.client.client import Client
from rcpkit.client.streams import StreamChannel
from rcpkit.server.lowlevel import Server
from rcpkit.server.runner import serve
from rcpkit.transport.stdio import StreamTransport

__all__ = ["MemoryChannel", "connect_in_memory"]


class MemoryChannel(StreamChannel):
    """A StreamChannel whose far end is ``server``, served on this event loop."""

    def __init__(self, server: Server, **serve_options: Any) -> None:
        to_server: asyncio.Queue[bytes] = asyncio.Queue()
        to_client: asyncio.Queue[bytes] = asyncio.Queue()

        async def read_server(_size: int) -> bytes:
            return await to_server.get()

        async def read_client(_size: int) -> bytes:
            return await to_client.get()

        self._server_transport = StreamTransport(
            read_server, to_client.put_nowait, close=lambda: to_client.put_nowait(b"")
        )
        super().__init__(
            read_client,
            to_server.put_nowait,
            description=f"in-memory server `{server.name}`",
            close_input=lambda: to_server.put_nowait(b""),
        )
        self._server = server
        self._serve_options = serve_options
        self._serving: asyncio.Task[None] | None = None

    async def open(self, receiver: Any) -> None:
        self._serving = asyncio.get_running_loop().create_task(
            serve(self._server, self._server_transport, **self._serve_options)
        )
        await super().open(receiver)

    async def close(self) -> None:
        await super().close()
        if self._serving is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._serving), 5.0)
            if not self._serving.done():
                self._serving.cancel()
        with contextlib.suppress(Exception):
            await self._server_transport.close()
        await self.stop_reading(1.0)


async def connect_in_memory(server: Server, **options: Any) -> Client:
    """A Client speaking to ``server`` in this process (``Client.connect`` options apply)."""
    return await Client.connect(MemoryChannel(server), **options)
