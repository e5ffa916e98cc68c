"""Shared helpers: an in-memory session against any App, bounded in time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from rcpkit.server.app import App
from rcpkit.server.runner import serve
from rcpkit.transport.memory import MemoryPeer, memory_pair


@asynccontextmanager
async def running(
    app: App,
    *,
    initialize: bool = True,
    init_params: dict[str, Any] | None = None,
    max_line_bytes: int = 1 << 20,
    **options: Any,
) -> AsyncIterator[MemoryPeer]:
    """Serve ``app`` over an in-memory transport; yields the raw client end."""
    transport, peer = memory_pair(max_line_bytes)
    task = asyncio.create_task(serve(app.server, transport, **options))
    try:
        if initialize:
            params = {"protocolVersion": 1, **(init_params or {})}
            reply = await peer.request("init", "initialize", params)
            assert "result" in reply, reply
        yield peer
    finally:
        peer.close()
        await asyncio.wait_for(task, 5)


async def silent(peer: MemoryPeer, seconds: float = 0.1) -> bool:
    """True when nothing arrives within ``seconds``."""
    try:
        await peer.recv(timeout=seconds)
    except TimeoutError:
        return True
    return False
