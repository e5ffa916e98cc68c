"""Small in-process engines for the federation tests, and a connector that reaches them."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rcpkit.client import Client, connect_in_memory
from rcpkit.federation import EngineSpec, Registry, parse_registry
from rcpkit.protocol import RCPError
from rcpkit.protocol import messages as m
from rcpkit.server import App, RequestContext

PYTHON = sys.executable
KEYWORD = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword"]


@dataclass
class Engine:
    """An in-memory engine: fixed hits per query word, with observable requests."""

    name: str
    documents: dict[str, str]
    modes: list[str] = field(default_factory=lambda: ["sparse"])
    score_floor: float | None = 0.0
    hangs: bool = False  # retrieve never answers: only a caller's timer or cancel ends it
    error: RCPError | None = None
    filter_fields: dict[str, str] | None = None
    catalog_identity: str | None = None
    malformed: bool = False
    seen: list[dict[str, Any]] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> App:
        app = App(self.name, "1")
        app.advertise("citations")
        if self.filter_fields is not None:
            app.advertise("filter", fields=self.filter_fields, operators=["eq"])
        if self.catalog_identity is not None:
            server = app.server
            identity = self.catalog_identity
            original = server.info_result

            def info_result(version: int = 1) -> dict[str, Any]:
                result = original(version)
                return {
                    **result,
                    "_meta": {**result["_meta"], "federation": {"identity": identity}},
                }

            server.info_result = info_result  # type: ignore[method-assign]

            @app.catalog_list(engines=0)
            def catalog_list(params: m.CatalogListParams) -> m.CatalogListResult:
                return m.CatalogListResult(engines=[])

        @app.retrieve(max_k=20, modes=self.modes, score_floor=self.score_floor)
        async def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
            self.seen.append({"params": params, "meta": dict(ctx.meta)})
            self.started.set()
            if self.hangs:
                await asyncio.Event().wait()
            if self.error is not None:
                raise self.error
            if self.malformed:
                return {"hits": "not a list"}  # type: ignore[return-value]
            words = set(str(params.query).lower().split())
            hits = [
                m.Hit(id=id, score=float(len(words & set(text.split()))), text=text)
                for id, text in sorted(self.documents.items())
                if words & set(text.split())
            ]
            hits.sort(key=lambda hit: -hit.score)
            return m.RetrieveResult(hits=hits[: params.k])

        return app


def registry(specs: Sequence[dict[str, Any]]) -> Registry:
    entries = [{"transport": "stdio", "command": ["unused"], **spec} for spec in specs]
    return parse_registry({"engines": entries})


def connector(engines: dict[str, Engine]) -> Any:
    async def connect(spec: EngineSpec) -> Client:
        engine = engines.get(spec.id)
        if engine is None:
            raise RCPError(-32010, f"{spec.id} is down")
        return await connect_in_memory(engine.app().server)

    return connect
