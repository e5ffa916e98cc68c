"""The blocking facade: the same async client, driven on a private event-loop thread.

>>> with SyncClient.connect_stdio(["rcpkit", "serve", "--engine", "keyword", "--sample"]) as client:
...     hits = client.retrieve("bm25", k=3).hits

Every wait is bounded by the call's own deadline plus a grace period; an
interrupted wait (Ctrl-C) cancels the call, which sends ``notifications/cancel``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from rcpkit.client.client import DEFAULT_CONNECT_TIMEOUT, Client
from rcpkit.client.errors import DeadlineExceeded
from rcpkit.client.options import CallOptions
from rcpkit.client.streaming import Event, StreamingCall
from rcpkit.client.wire import Endpoint
from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import Capabilities

__all__ = ["LoopThread", "SyncClient", "SyncStreamingCall", "blocking", "blocking_stream"]

T = TypeVar("T")
P = ParamSpec("P")
_GRACE = 5.0


class LoopThread:
    """An event loop running on a daemon thread, for blocking callers."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="rcpkit-client")
        self._thread.daemon = True
        self._thread.start()

    def run(
        self,
        coroutine: Coroutine[Any, Any, T],
        timeout: float | None,
        *,
        stated: float | None = None,
    ) -> T:
        """Run ``coroutine`` on the loop and wait for it, at most ``timeout`` seconds.

        ``stated`` is the deadline the caller set (``timeout`` adds a grace period
        to it); a wait that runs out reports that one.
        """
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # the call's own DeadlineExceeded (a TimeoutError): keep its message
            future.cancel()
            raise DeadlineExceeded(
                "call", stated if stated is not None else timeout or 0.0
            ) from None
        except BaseException:
            future.cancel()  # Ctrl-C: the task is cancelled, which cancels the request
            raise

    def call_soon(self, function: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon_threadsafe(function, *args)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(_GRACE)
        if not self._thread.is_alive():
            self.loop.close()


class SyncStreamingCall(Generic[T]):
    """A :class:`StreamingCall` for blocking code: iterate events, then ``result()``."""

    def __init__(self, call: StreamingCall[T], runner: LoopThread, bound: float | None) -> None:
        self._call = call
        self._runner = runner
        self._bound = bound

    def __iter__(self) -> Iterator[Event]:
        events = self._call.__aiter__()
        while True:
            try:
                yield self._runner.run(_next(events), self._bound)
            except StopAsyncIteration:
                return

    def result(self) -> T:
        return self._runner.run(self._call.result(), self._bound)

    def cancel(self, reason: str | None = None) -> None:
        """§7.14: ask the server to stop; ``result()`` still returns or raises -32006."""
        self._runner.call_soon(self._call.cancel, reason)

    def abort(self) -> None:
        self._runner.call_soon(self._call.abort)

    def __enter__(self) -> SyncStreamingCall[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


async def _next(events: Any) -> Event:
    event: Event = await events.__anext__()
    return event


def blocking(
    method: Callable[Concatenate[Client, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[SyncClient, P], T]:
    """The blocking twin of an async client method, with the same signature."""

    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._wait(method(self.client, *args, **kwargs), kwargs)

    functools.update_wrapper(call, method)
    return call


def blocking_stream(
    method: Callable[Concatenate[Client, P], StreamingCall[T]],
) -> Callable[Concatenate[SyncClient, P], SyncStreamingCall[T]]:
    """A streaming method for blocking code: events by iteration, then ``result()``."""

    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> SyncStreamingCall[T]:
        async def start() -> StreamingCall[T]:
            return method(self.client, *args, **kwargs)

        started = self._wait(start(), kwargs)
        return SyncStreamingCall(started, self._runner, self._bound(kwargs))

    functools.update_wrapper(call, method)
    return call


class SyncClient:
    """Blocking twin of :class:`Client`; each method runs the async one and waits."""

    def __init__(self, client: Client, runner: LoopThread) -> None:
        self.client = client
        self._runner = runner

    @classmethod
    def connect(cls, endpoint: Endpoint, **options: Any) -> SyncClient:
        return cls._opened(lambda: Client.connect(endpoint, **options), options)

    @classmethod
    def connect_stdio(cls, command: list[str] | tuple[str, ...], **options: Any) -> SyncClient:
        return cls._opened(lambda: Client.connect_stdio(command, **options), options)

    @classmethod
    def connect_http(cls, url: str, **options: Any) -> SyncClient:
        return cls._opened(lambda: Client.connect_http(url, **options), options)

    @classmethod
    def _opened(
        cls, connecting: Callable[[], Coroutine[Any, Any, Client]], options: Mapping[str, Any]
    ) -> SyncClient:
        """A client connected on a new loop thread; the thread stops if connecting fails."""
        runner = LoopThread()
        bound = float(options.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)) + _GRACE
        try:
            client = runner.run(connecting(), bound)
        except BaseException:
            runner.stop()
            raise
        return cls(client, runner)

    # --- state from initialize ---

    @property
    def server(self) -> m.PeerInfo:
        return self.client.server

    @property
    def capabilities(self) -> Capabilities:
        return self.client.capabilities

    @property
    def raw_capabilities(self) -> dict[str, Any]:
        return self.client.raw_capabilities

    @property
    def protocol_version(self) -> int:
        return self.client.protocol_version

    @property
    def conformance(self) -> str | None:
        return self.client.conformance

    def supports(self, capability: str) -> bool:
        return self.client.supports(capability)

    # --- calls ---

    def _wait(self, coroutine: Coroutine[Any, Any, T], options: Mapping[str, Any]) -> T:
        stated = self._timeout(options)
        bound = None if stated is None else stated + _GRACE
        return self._runner.run(coroutine, bound, stated=stated)

    def _timeout(self, options: Mapping[str, Any]) -> float | None:
        """The deadline this call was given (its own, its options', else the client's)."""
        timeout = options.get("timeout")
        call = options.get("options")
        if timeout is None and isinstance(call, CallOptions):
            timeout = call.timeout
        if timeout is None:
            timeout = self.client.timeout
        return None if timeout is None else float(timeout)

    def _bound(self, options: Mapping[str, Any]) -> float | None:
        stated = self._timeout(options)
        return None if stated is None else stated + _GRACE

    # Each blocking method is the async one, run and waited for: one declaration, two
    # surfaces (the same typed keywords, so mypy checks `mode=` here as it does there).
    call = blocking(Client.call)
    request = blocking(Client.request)
    info = blocking(Client.info)
    ping = blocking(Client.ping)
    embed = blocking(Client.embed)
    embed_sparse = blocking(Client.embed_sparse)
    embed_multi = blocking(Client.embed_multi)
    rerank = blocking(Client.rerank)
    retrieve = blocking(Client.retrieve)
    stream_retrieve = blocking_stream(Client.stream_retrieve)
    query_transform = blocking(Client.query_transform)
    graph = blocking(Client.graph)
    index_add = blocking(Client.index_add)
    index_delete = blocking(Client.index_delete)
    catalog_list = blocking(Client.catalog_list)
    feedback = blocking(Client.feedback)
    memory_build = blocking(Client.memory_build)
    memory_recall = blocking(Client.memory_recall)

    # --- closing ---

    def close(self) -> None:
        try:
            self._runner.run(self.client.close(), 10.0)
        finally:
            self._runner.stop()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
