"""Small apps the server tests run against, each with observable handlers."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rcpkit.protocol import messages as m
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext

# A test's wait for a handler's event (started, stopped, an answer) ends on the event;
# this bound only catches a hang. 2-3 s could pass on a loaded machine (issue 52).
PATIENT = 30.0


@dataclass
class Probe:
    """What the handlers let a test observe."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    thread_started: threading.Event = field(default_factory=threading.Event)
    finished: list[str] = field(default_factory=list)
    steps: int = 0


def probe_app(probe: Probe, *, streaming: bool = True, log: bool = True) -> App:
    app = App("probe", "9.9")
    if streaming:
        app.advertise("streaming")
    if log:
        app.advertise("log")

    @app.retrieve(max_k=50, modes=["sparse", "dense"], fusion=["rrf"])
    async def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        query = params.query
        if query == "block":
            probe.started.set()
            try:
                await probe.release.wait()
            except asyncio.CancelledError:
                probe.stopped.set()
                raise
        elif query == "progress":
            ctx.progress(0.25, "recall", "first")
            ctx.progress(0.75, "rerank", partial={"hits": [{"id": "a", "score": 1.0}]})
        elif query == "log":
            ctx.log("debug", "a debug line")
            ctx.log("warning", "a warning", data={"n": 1})
        elif query == "boom":
            raise RuntimeError("secret internal detail")
        elif query == "nan":
            return m.RetrieveResult(hits=[m.Hit(id="n", score=float("nan"))])
        elif query == "unencodable":
            return {"hits": [{"id": "x", "score": 1.0, "text": object()}]}  # type: ignore[return-value]
        probe.finished.append(str(query))
        return m.RetrieveResult(
            hits=[m.Hit(id=str(query), score=1.0)],
            usage=m.Usage(notes=ctx.notes or None),
        )

    @app.rerank(methods=["colbert"], max_candidates=20)
    def rerank(params: m.RerankParams, ctx: RequestContext) -> m.RerankResult:
        # CPU-bound in a worker thread: stops only at its checkpoint.
        probe.thread_started.set()
        deadline = time.monotonic() + 10
        try:
            while time.monotonic() < deadline:
                ctx.check_cancelled()
                probe.steps += 1
                time.sleep(0.005)
        except BaseException:
            probe.stopped.set()
            raise
        return m.RerankResult(scores=[0.0] * len(params.items))

    return app


def echo_app() -> App:
    app = App("echo", "1")

    @app.retrieve(max_k=5, modes=["sparse"])
    def retrieve(params: m.RetrieveParams) -> dict[str, Any]:
        return {"hits": [{"id": str(params.query), "score": float(params.k)}]}

    return app
