"""The methods a gateway routes to one engine (``embed``, ``rerank``, writes, …).

Which engine takes a call is ``rcpkit.federation.routing``'s rule; this module
registers a handler for each routable method some engine advertises, with the
capability metadata of the engine that would take it (STYLE §6: derived, never
kept by hand), and tags each answer with the engine that gave it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from rcpkit.federation.federation import Federation
from rcpkit.federation.routing import ENGINE_META_KEY, capable, write_target
from rcpkit.server.context import RequestContext
from rcpkit.server.lowlevel import Server

__all__ = ["ROUTED", "register_routes", "routes_writes"]

# Every method the gateway forwards to a single engine.
ROUTED = (
    "embed",
    "embed/sparse",
    "embed/multi",
    "rerank",
    "query/transform",
    "feedback",
    "memory/build",
    "memory/recall",
    "index/add",
    "index/delete",
)


def routes_writes(federation: Federation) -> bool:
    """Whether some engine takes index writes (the gateway's index is then writable)."""
    return bool(capable(federation.members, "index/add"))


def register_routes(server: Server, federation: Federation) -> list[str]:
    """Register the routable methods some engine advertises; their names."""
    members = federation.members
    registered = []
    for method in ROUTED:
        engines = capable(members, method)
        if not engines:
            continue
        source = engines[0]
        if method in ("index/add", "index/delete"):
            source = write_target(members, method) or source
        key = _capability_key(method)
        server.handle(method, _handler(federation, method), capability=source.capabilities[key])
        registered.append(method)
    return registered


def _handler(federation: Federation, method: str) -> Any:
    async def forward(params: msgspec.Struct, ctx: RequestContext) -> Any:
        wire = msgspec.to_builtins(params)
        wire["_meta"] = dict(ctx.meta)
        engine = ctx.meta.get(ENGINE_META_KEY)
        routed = await federation.call_one(
            method,
            wire,
            engine=engine if isinstance(engine, str) else None,
            deadline=ctx.remaining(),
            meta=ctx.meta,
        )
        result = routed.result if isinstance(routed.result, dict) else {}
        meta = dict(result.get("_meta") or {})
        meta["federation"] = {**dict(meta.get("federation") or {}), "engine": routed.engine}
        if routed.tried:
            meta["federation"]["failedOver"] = list(routed.tried)
        return {**result, "_meta": meta}

    return forward


def _capability_key(method: str) -> str:
    from rcpkit.protocol.methods import METHODS

    return METHODS[method].capability or method
