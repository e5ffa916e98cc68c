"""The dispatcher API every transport drives: submit with its own sinks, cancel, tenant."""

from __future__ import annotations

import asyncio
from typing import Any

from http_apps import Probe, probe_app

from rcpkit.codec import Request
from rcpkit.protocol import messages as m
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext
from rcpkit.server.dispatcher import Dispatcher
from rcpkit.server.runner import Runtime


def dispatcher_for(app: App, tenant: str | None = None) -> Dispatcher:
    return Runtime(app.server).open(tenant=tenant, stateless=True)


class Sink:
    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.arrived = asyncio.Event()

    def __call__(self, data: bytes) -> None:
        self.frames.append(data)
        self.arrived.set()


async def test_cancel_by_id_stops_the_request_and_it_is_answered_once() -> None:
    probe = Probe()
    dispatcher = dispatcher_for(probe_app(probe))
    reply = Sink()
    dispatcher.submit(Request("x", "retrieve", {"query": "block"}), reply)
    assert await asyncio.to_thread(probe.gate.entered.wait, 5)
    assert dispatcher.cancel("nope") is False
    assert dispatcher.cancel("x") is True
    await asyncio.wait_for(reply.arrived.wait(), 5)
    assert reply.frames == [
        b'{"jsonrpc":"2.0","id":"x","error":{"code":-32006,"message":"cancelled"}}'
    ]
    assert probe.gate.cancelled.is_set()
    assert dispatcher.cancel("x") is False  # answered: a no-op (§7.14)


async def test_progress_from_a_worker_thread_reaches_a_submit_only_transport() -> None:
    app = App("threads", "1")
    app.advertise("streaming")

    @app.retrieve(max_k=5, modes=["sparse"])
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> dict[str, Any]:
        ctx.progress(0.5, "recall")  # from the worker thread
        return {"hits": []}

    dispatcher = dispatcher_for(app)
    reply, notify = Sink(), Sink()
    params = {"query": "q", "_meta": {"progressToken": 3}}
    dispatcher.submit(Request(1, "retrieve", params), reply, notify)
    await asyncio.wait_for(reply.arrived.wait(), 5)
    assert notify.frames == [
        b'{"jsonrpc":"2.0","method":"notifications/progress",'
        b'"params":{"progressToken":3,"progress":0.5,"stage":"recall"}}'
    ]


async def test_the_transports_tenant_is_what_handlers_see() -> None:
    probe = Probe()
    dispatcher = dispatcher_for(probe_app(probe), tenant="acme")
    reply = Sink()
    dispatcher.submit(Request(1, "retrieve", {"query": "q"}), reply)
    await asyncio.wait_for(reply.arrived.wait(), 5)
    assert probe.tenants == ["acme"]
