"""A call whose progress and log frames can be iterated while it runs (§9, §17.1).

>>> async with client.stream_retrieve("hybrid fusion", k=5) as call:
...     async for event in call:        # ProgressParams | LogParams, advisory only
...         print(event)
...     result = await call.result()    # the authoritative final response

Frames are advisory: iteration simply ends when the response arrives, whether
or not any frame came, and a slow consumer loses frames, never the result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, Generic, TypeVar

from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Id

__all__ = ["Event", "StreamingCall"]

T = TypeVar("T")
Event = m.ProgressParams | m.LogParams
Canceller = Callable[[Id, str | None], None]

_MAX_BUFFERED_EVENTS = 1024


class StreamingCall(Generic[T]):
    """An in-flight call: iterate its events, await its result, or cancel it."""

    def __init__(self, cancel: Canceller) -> None:
        self._cancel = cancel
        self._events: asyncio.Queue[Event] = asyncio.Queue(_MAX_BUFFERED_EVENTS)
        self._task: asyncio.Task[T] | None = None
        self._id: Id | None = None

    # --- the client's side ---

    def start(self, call: Coroutine[Any, Any, T]) -> None:
        self._task = asyncio.get_running_loop().create_task(call)

    def on_event(self, event: Event) -> None:
        with contextlib.suppress(asyncio.QueueFull):
            self._events.put_nowait(event)

    def on_sent(self, id: Id) -> None:
        self._id = id

    # --- the caller's side ---

    @property
    def task(self) -> asyncio.Task[T]:
        assert self._task is not None, "the call was not started"
        return self._task

    @property
    def id(self) -> Id | None:
        """The request id on the wire (of the latest attempt)."""
        return self._id

    def done(self) -> bool:
        return self.task.done()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Event]:
        task = self.task
        while True:
            if not self._events.empty():
                yield self._events.get_nowait()
                continue
            if task.done():
                return
            getter = asyncio.ensure_future(self._events.get())
            try:
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                if not getter.done():
                    getter.cancel()
            if getter.done() and not getter.cancelled():
                yield getter.result()

    async def result(self) -> T:
        """The final response (raises its RCPError); cancelling this await aborts the call."""
        return await self.task

    def __await__(self) -> Generator[Any, None, T]:
        return self.result().__await__()

    def cancel(self, reason: str | None = None) -> None:
        """§7.14: ask the server to stop; the result still comes (a full one, or -32006)."""
        if self._id is not None and not self.done():
            self._cancel(self._id, reason)

    def abort(self) -> None:
        """Stop waiting now: ``notifications/cancel`` goes out, a late answer is discarded."""
        self.task.cancel()

    async def __aenter__(self) -> StreamingCall[T]:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        task = self.task
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: an error the caller never awaited is not "lost"
