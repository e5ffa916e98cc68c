"""Apps the HTTP tests serve: an observable probe and a small multi-tenant engine.

Handlers run on the server's own thread and loop; tests observe them through
thread-safe events and open a :class:`Gate` from the test thread.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import IndexCapability
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext


class Gate:
    """An async handler waits here until the test opens it, or until it is cancelled."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._open = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def wait(self, bound: float = 10.0) -> None:
        event = asyncio.Event()
        with self._lock:
            self._waiters.append((asyncio.get_running_loop(), event))
            if self._open:
                event.set()
        self.entered.set()
        try:
            async with asyncio.timeout(bound):
                await event.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    def open(self) -> None:
        with self._lock:
            self._open = True
            for loop, event in self._waiters:
                loop.call_soon_threadsafe(event.set)


@dataclass
class Probe:
    gate: Gate = field(default_factory=Gate)
    tenants: list[str | None] = field(default_factory=list)
    writes: int = 0


def probe_app(probe: Probe, *, streaming: bool = True) -> App:
    """retrieve: `block` waits on the gate, `stream` reports progress then waits on it,
    `progress` streams two frames; anything else is echoed."""
    app = App("probe", "1.0")
    if streaming:
        app.advertise("streaming")
    app.advertise("log")

    @app.retrieve(max_k=50, modes=["sparse"])
    async def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> dict[str, Any]:
        probe.tenants.append(ctx.tenant)
        query = str(params.query)
        if query == "block":
            await probe.gate.wait()
        elif query == "stream":
            ctx.progress(0.5, "recall", "before the gate")
            await probe.gate.wait()
        elif query == "progress":
            ctx.progress(0.25, "recall", "first")
            ctx.log("warning", "halfway")
            ctx.progress(0.75, "rerank", partial={"hits": [{"id": "a", "score": 1.0}]})
        return {"hits": [{"id": query, "score": 1.0}]}

    @app.index_add(capability=IndexCapability(writable=True))
    def index_add(params: m.IndexAddParams) -> m.IndexAddResult:
        probe.writes += 1
        return m.IndexAddResult(ids=[doc.id or "new" for doc in params.documents])

    @app.index_delete()
    def index_delete(params: m.IndexDeleteParams) -> m.IndexDeleteResult:
        probe.writes += 1
        return m.IndexDeleteResult(deleted=0)

    return app


# --- a multi-tenant engine: what honouring ctx.tenant means ---


class TenantStore:
    """Documents keyed by (tenant, id): one tenant's ids never name another's.

    Cursors are opaque server-side handles bound to the tenant that got them;
    a foreign cursor is answered exactly like a made-up one.
    """

    def __init__(self) -> None:
        self._documents: dict[tuple[str | None, str], str] = {}
        self._cursors: dict[str, tuple[str | None, str, int]] = {}
        self._lock = threading.Lock()

    def add(self, tenant: str | None, documents: list[m.Document]) -> list[str]:
        with self._lock:
            ids = []
            for position, document in enumerate(documents):
                id = document.id or f"doc-{len(self._documents)}-{position}"
                self._documents[(tenant, id)] = document.text
                ids.append(id)
            return ids

    def delete(self, tenant: str | None, ids: list[str]) -> int:
        with self._lock:
            return sum(self._documents.pop((tenant, id), None) is not None for id in ids)

    def search(
        self, tenant: str | None, query: str, k: int, cursor: str | None
    ) -> tuple[list[tuple[str, str]], str | None]:
        with self._lock:
            offset = 0
            if cursor is not None:
                bound = self._cursors.get(cursor)
                if bound is None or bound[0] != tenant or bound[1] != query:
                    raise RCPError(ErrorCode.NOT_FOUND, "unknown or expired cursor")
                offset = bound[2]
            matches = sorted(
                (id, text)
                for (owner, id), text in self._documents.items()
                if owner == tenant and query in text
            )
            page = matches[offset : offset + k]
            next_cursor = None
            if offset + k < len(matches):
                next_cursor = f"c{len(self._cursors)}"
                self._cursors[next_cursor] = (tenant, query, offset + k)
            return page, next_cursor


def tenant_app(store: TenantStore) -> App:
    app = App("tenants", "1.0")
    app.advertise("pagination")

    @app.retrieve(max_k=10, modes=["sparse"])
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> dict[str, Any]:
        page, cursor = store.search(ctx.tenant, str(params.query), params.k, params.cursor)
        result: dict[str, Any] = {"hits": [{"id": id, "score": 1.0, "text": t} for id, t in page]}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result

    @app.index_add(capability=IndexCapability(writable=True))
    def index_add(params: m.IndexAddParams, ctx: RequestContext) -> m.IndexAddResult:
        return m.IndexAddResult(ids=store.add(ctx.tenant, params.documents))

    @app.index_delete()
    def index_delete(params: m.IndexDeleteParams, ctx: RequestContext) -> m.IndexDeleteResult:
        # §15.6: another tenant's id is indistinguishable from a missing one.
        return m.IndexDeleteResult(deleted=store.delete(ctx.tenant, params.ids))

    return app
