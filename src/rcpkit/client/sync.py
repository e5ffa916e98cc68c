"""The blocking facade: the same async client, driven on a private event-loop thread.

>>> with SyncClient.connect_stdio(["rcpkit", "serve", "--engine", "keyword", "--sample"]) as client:
...     hits = client.retrieve("bm25", k=3).hits

Every wait is bounded by the call's own deadline plus a grace period; an
interrupted wait (Ctrl-C) cancels the call, which sends ``notifications/cancel``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar

from rcpkit.client.client import Client
from rcpkit.client.errors import DeadlineExceeded
from rcpkit.client.options import CallOptions
from rcpkit.client.streaming import Event, StreamingCall
from rcpkit.client.wire import Endpoint
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Wire
from rcpkit.protocol.capabilities import Capabilities

__all__ = ["LoopThread", "SyncClient", "SyncStreamingCall"]

T = TypeVar("T")
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


class SyncClient:
    """Blocking twin of :class:`Client`; each method runs the async one and waits."""

    def __init__(self, client: Client, runner: LoopThread) -> None:
        self.client = client
        self._runner = runner

    @classmethod
    def connect(cls, endpoint: Endpoint, **options: Any) -> SyncClient:
        runner = LoopThread()
        bound = float(options.get("connect_timeout", 10.0)) + _GRACE
        try:
            client = runner.run(Client.connect(endpoint, **options), bound)
        except BaseException:
            runner.stop()
            raise
        return cls(client, runner)

    @classmethod
    def connect_stdio(cls, command: list[str] | tuple[str, ...], **options: Any) -> SyncClient:
        runner = LoopThread()
        bound = float(options.get("connect_timeout", 10.0)) + _GRACE
        try:
            client = runner.run(Client.connect_stdio(command, **options), bound)
        except BaseException:
            runner.stop()
            raise
        return cls(client, runner)

    @classmethod
    def connect_http(cls, url: str, **options: Any) -> SyncClient:
        runner = LoopThread()
        bound = float(options.get("connect_timeout", 10.0)) + _GRACE
        try:
            client = runner.run(Client.connect_http(url, **options), bound)
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

    def _wait(self, coroutine: Coroutine[Any, Any, T], options: dict[str, Any]) -> T:
        stated = self._timeout(options)
        bound = None if stated is None else stated + _GRACE
        return self._runner.run(coroutine, bound, stated=stated)

    def _timeout(self, options: dict[str, Any]) -> float | None:
        """The deadline this call was given (its own, its options', else the client's)."""
        timeout = options.get("timeout")
        call = options.get("options")
        if timeout is None and isinstance(call, CallOptions):
            timeout = call.timeout
        if timeout is None:
            timeout = self.client.timeout
        return None if timeout is None else float(timeout)

    def _bound(self, options: dict[str, Any]) -> float | None:
        stated = self._timeout(options)
        return None if stated is None else stated + _GRACE

    def call(self, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        return self._wait(self.client.call(method, params, **options), options)

    def request(self, params: Wire, **options: Any) -> Wire:
        return self._wait(self.client.request(params, **options), options)

    def info(self, **options: Any) -> m.InitializeResult:
        return self._wait(self.client.info(**options), options)

    def ping(self, nonce: str | int | float | None = None, **options: Any) -> m.PingResult:
        return self._wait(self.client.ping(nonce, **options), options)

    def embed(self, inputs: Any, **options: Any) -> m.EmbedResult:
        return self._wait(self.client.embed(inputs, **options), options)

    def embed_sparse(self, texts: Any, **options: Any) -> m.SparseEmbedResult:
        return self._wait(self.client.embed_sparse(texts, **options), options)

    def embed_multi(self, inputs: Any, **options: Any) -> m.MultiEmbedResult:
        return self._wait(self.client.embed_multi(inputs, **options), options)

    def rerank(self, query: Any, passages: Any, **options: Any) -> m.RerankResult:
        return self._wait(self.client.rerank(query, passages, **options), options)

    def retrieve(self, query: Any, **options: Any) -> m.RetrieveResult:
        return self._wait(self.client.retrieve(query, **options), options)

    def stream_retrieve(self, query: Any, **options: Any) -> SyncStreamingCall[m.RetrieveResult]:
        async def start() -> StreamingCall[m.RetrieveResult]:
            return self.client.stream_retrieve(query, **options)

        call = self._wait(start(), options)
        return SyncStreamingCall(call, self._runner, self._bound(options))

    def query_transform(self, query: Any, method: Any, **options: Any) -> m.TransformResult:
        return self._wait(self.client.query_transform(query, method, **options), options)

    def graph(self, op: Any, **options: Any) -> m.GraphResult:
        return self._wait(self.client.graph(op, **options), options)

    def index_add(self, documents: Any, **options: Any) -> m.IndexAddResult:
        return self._wait(self.client.index_add(documents, **options), options)

    def index_delete(self, ids: Any, **options: Any) -> m.IndexDeleteResult:
        return self._wait(self.client.index_delete(ids, **options), options)

    def catalog_list(self, **options: Any) -> m.CatalogListResult:
        return self._wait(self.client.catalog_list(**options), options)

    def feedback(self, signals: Any, **options: Any) -> m.FeedbackResult:
        return self._wait(self.client.feedback(signals, **options), options)

    def memory_build(self, **options: Any) -> m.MemoryBuildResult:
        return self._wait(self.client.memory_build(**options), options)

    def memory_recall(self, query: Any, **options: Any) -> m.MemoryRecallResult:
        return self._wait(self.client.memory_recall(query, **options), options)

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
