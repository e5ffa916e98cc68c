"""Shared helpers: an in-memory session against any App, bounded in time."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from rcpkit.server.app import App
from rcpkit.server.runner import serve
from rcpkit.transport.memory import MemoryPeer, memory_pair

_REPO = Path(__file__).resolve().parents[1]


def shared_path(*parts: str) -> Path:
    """A file of the ``shared`` folder (spec, schema, data sets) beside the checkout.

    CI clones the repo with ``../shared`` beside it; a git worktree sits deeper
    (``/work/wt/NAME``), so the nearest ancestor of the repo that has a
    ``shared`` folder is used. ``$RCPKIT_SHARED`` overrides both. The path is
    returned even when it is missing, so a caller can say what it looked for.
    """
    override = os.environ.get("RCPKIT_SHARED")
    if override:
        return Path(override).joinpath(*parts)
    for ancestor in _REPO.parents:
        if (ancestor / "shared").is_dir():
            return ancestor.joinpath("shared", *parts)
    return _REPO.parent.joinpath("shared", *parts)


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
