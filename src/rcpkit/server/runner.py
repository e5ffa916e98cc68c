"""Serving a Server over stdio: one process, one session (§5.1)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO

from rcpkit.server.dispatcher import DEFAULT_MAX_BATCH, Dispatcher
from rcpkit.server.session import Session
from rcpkit.transport.base import Transport
from rcpkit.transport.stdio import DEFAULT_MAX_LINE_BYTES, open_stdio

if TYPE_CHECKING:
    from rcpkit.server.lowlevel import Server

__all__ = ["serve", "serve_stdio"]


async def serve(
    server: Server,
    transport: Transport,
    *,
    deadline: float | None = None,
    max_batch: int = DEFAULT_MAX_BATCH,
    workers: int = 4,
    tenant: str | None = None,
) -> None:
    """Run one session of ``server`` over ``transport`` until shutdown or end of input.

    ``tenant`` is who the transport established the peer to be (§15.6).
    """
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rcpkit-worker")
    dispatcher = Dispatcher(
        Session(server),
        transport,
        executor=executor,
        deadline=deadline,
        max_batch=max_batch,
        tenant=tenant,
    )
    try:
        await dispatcher.run()
    finally:
        # Cancelled work in threads stops at its next checkpoint; do not wait on it.
        executor.shutdown(wait=False, cancel_futures=True)


async def serve_stdio(
    server: Server,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    deadline: float | None = None,
    max_batch: int = DEFAULT_MAX_BATCH,
    workers: int = 4,
) -> None:
    """Serve on stdin/stdout. stdout carries protocol frames only (§5.1)."""
    transport = await open_stdio(
        stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, max_line_bytes=max_line_bytes
    )
    try:
        await serve(server, transport, deadline=deadline, max_batch=max_batch, workers=workers)
    finally:
        await transport.close()


def run_stdio(server: Server, **options: object) -> None:
    """Blocking entry point: serve stdio, then return once the session ended."""
    run_async(serve_stdio(server, **options))  # type: ignore[arg-type]


def run_async(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on uvloop when it is installed (lower per-message latency)."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)
