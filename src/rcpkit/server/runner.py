"""Running sessions: the read loop over a byte transport, and the one way sessions open.

A transport never wires a session to a dispatcher itself. :class:`Runtime`
holds what every session of one endpoint shares (the server, the worker
threads, the default deadline, the batch cap) and opens dispatchers; a byte
stream (stdio, memory) is then driven by :func:`pump`, an HTTP exchange submits
its body's frame itself. Either way the only calls are ``submit`` and ``cancel``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO

from rcpkit.observe.observer import Observer
from rcpkit.server.dispatcher import DEFAULT_MAX_BATCH, Dispatcher
from rcpkit.server.limits import (
    DEFAULT_DEADLINE_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_WRITE_DEADLINE_SECONDS,
)
from rcpkit.server.registration import Served
from rcpkit.server.session import Session
from rcpkit.transport.base import Transport
from rcpkit.transport.stdio import DEFAULT_MAX_LINE_BYTES, open_stdio

__all__ = ["Runtime", "pump", "serve", "serve_stdio"]


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the sessions of one endpoint share; ``open`` starts one of them."""

    server: Served
    executor: Executor | None = None
    deadline: float | None = None  # default per-request budget, seconds (§13.1)
    max_batch: int = DEFAULT_MAX_BATCH
    # Shared defaults of every transport (rcpkit.server.limits): writes get at
    # least this long, and a connection at most this many requests running.
    write_deadline: float | None = DEFAULT_WRITE_DEADLINE_SECONDS
    max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT
    observer: Observer | None = None  # metrics, access log, trace ids

    def open(
        self, session: Session | None = None, *, tenant: str | None = None, stateless: bool = False
    ) -> Dispatcher:
        """A dispatcher over ``session`` (a new one, ``stateless`` for §5.2, by default).

        ``tenant`` is who the transport established the peer to be (§15.6).
        """
        return Dispatcher(
            session or Session(self.server, stateless=stateless),
            executor=self.executor,
            deadline=self.deadline,
            write_deadline=self.write_deadline,
            max_batch=self.max_batch,
            max_in_flight=self.max_in_flight,
            tenant=tenant,
            observer=self.observer,
        )


async def pump(dispatcher: Dispatcher, transport: Transport) -> None:
    """The read loop of a byte transport: every frame is submitted, answers go to ``send``.

    Ends at end of input or after ``shutdown``; then the requests in flight finish
    and everything queued is flushed (§5.1, §13.1).
    """
    frames = transport.frames()
    try:
        async for frame in frames:
            # Admission (a cap on requests in flight, output back-pressure) waits here,
            # before submit, so a slow peer stops being read instead of piling up work.
            dispatcher.submit(frame, transport.send)
            if dispatcher.closing:
                # §13.1: nothing received after shutdown is processed.
                break
    finally:
        await frames.aclose()  # type: ignore[attr-defined]
        await dispatcher.finish()
        await transport.drain()


async def serve(
    server: Served,
    transport: Transport,
    *,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
    write_deadline: float | None = DEFAULT_WRITE_DEADLINE_SECONDS,
    max_batch: int = DEFAULT_MAX_BATCH,
    max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT,
    workers: int = 4,
    tenant: str | None = None,
    observer: Observer | None = None,
) -> None:
    """Run one session of ``server`` over ``transport`` until shutdown or end of input.

    ``deadline``/``write_deadline``/``max_in_flight`` default to the runtime's
    bounds (``rcpkit.server.limits``); ``deadline=None`` disables deadlines.
    ``tenant`` is who the transport established the peer to be (§15.6).
    """
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rcpkit-worker")
    runtime = Runtime(
        server,
        executor,
        deadline,
        max_batch,
        write_deadline=write_deadline,
        max_in_flight=max_in_flight,
        observer=observer,
    )
    try:
        await pump(runtime.open(tenant=tenant), transport)
    finally:
        # Cancelled work in threads stops at its next checkpoint; do not wait on it.
        executor.shutdown(wait=False, cancel_futures=True)


async def serve_stdio(
    server: Served,
    *,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    deadline: float | None = DEFAULT_DEADLINE_SECONDS,
    write_deadline: float | None = DEFAULT_WRITE_DEADLINE_SECONDS,
    max_batch: int = DEFAULT_MAX_BATCH,
    max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT,
    workers: int = 4,
    observer: Observer | None = None,
) -> None:
    """Serve on stdin/stdout. stdout carries protocol frames only (§5.1)."""
    transport = await open_stdio(
        stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, max_line_bytes=max_line_bytes
    )
    try:
        await serve(
            server,
            transport,
            deadline=deadline,
            write_deadline=write_deadline,
            max_batch=max_batch,
            max_in_flight=max_in_flight,
            workers=workers,
            observer=observer,
        )
    finally:
        await transport.close()


def run_stdio(server: Served, **options: object) -> None:
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
