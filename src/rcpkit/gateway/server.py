"""The aggregating gateway: an rcpkit Server whose handlers call a Federation (§7.13, §16).

>>> federation = Federation.load("rcp.json", identity="docs-gateway")
>>> await federation.connect()
>>> server = build_gateway(federation)
>>> await server.serve_stdio()

It answers ``retrieve`` (and ``graph`` when an engine offers it) with the
fused result, ``catalog/list`` with each engine's identity, capabilities,
health (and endpoint, unless hidden), and routes ``embed``, ``embed/*``,
``rerank``, ``query/transform``, ``feedback``, ``memory/*`` and index writes
to one engine (``rcpkit.federation.routing``). Transport limits, auth and
deadlines are the runtime's, exactly as for any rcpkit server.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rcpkit
from rcpkit.federation.federation import Federation
from rcpkit.federation.registry import Registry
from rcpkit.gateway.capabilities import (
    cites,
    filter_capability,
    graph_capability,
    retrieve_capability,
)
from rcpkit.gateway.filters import validate_filter
from rcpkit.gateway.routes import register_routes, routes_writes
from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import CatalogCapability, Empty
from rcpkit.server.context import RequestContext
from rcpkit.server.lowlevel import Server

__all__ = ["GatewayServer", "build_gateway", "default_identity"]


class GatewayServer(Server):
    """A Server that states its federation identity in ``initialize``/``info`` ``_meta``,
    so that an upstream aggregator can see a cycle before forwarding to it (§16.2)."""

    def __init__(self, name: str, version: str, identity: str, *, writes: bool = False) -> None:
        super().__init__(name, version, read_only=not writes)
        self.identity = identity

    def info_result(self, version: int = 1) -> dict[str, Any]:
        result = super().info_result(version)
        meta = dict(result.get("_meta") or {})
        meta["federation"] = {"identity": self.identity}
        return {**result, "_meta": meta}


def default_identity(name: str, registry: Registry) -> str:
    """``name@digest``: two processes serving the same registry file share it, so a
    registry that lists its own gateway is recognised as a cycle (§16.2)."""
    digest = hashlib.sha256(registry.source.encode("utf-8")).hexdigest()[:12]
    return f"{name}@{digest}"


def build_gateway(
    federation: Federation,
    *,
    name: str = "rcpkit-gateway",
    version: str = rcpkit.__version__,
    hide_endpoints: bool = False,
) -> GatewayServer:
    """A server over ``federation`` (connect it first: capabilities are derived now, §13.2)."""
    if federation.identity is None:
        raise ValueError("a gateway forwards (§16.2): its Federation needs an identity")
    server = GatewayServer(name, version, federation.identity, writes=routes_writes(federation))
    members = [state.capabilities for state in federation.members]
    catalog = federation.catalog(endpoints=not hide_endpoints)

    async def catalog_list(params: m.CatalogListParams) -> dict[str, Any]:
        # Each entry carries _meta.health: up/down (and why), demoted, calls, p50.
        return {"engines": federation.catalog_wire(endpoints=not hide_endpoints)}

    server.handle("catalog/list", catalog_list, capability=CatalogCapability(engines=len(catalog)))
    server.advertise("streaming", Empty())
    # Cursors over the fused list, signed by the gateway (rcpkit.federation.cursors).
    server.advertise("pagination", Empty())
    if cites(members):
        server.advertise("citations", Empty())
    filters = filter_capability(members)
    if filters is not None:
        server.advertise("filter", filters)
    retrieve = retrieve_capability(members)
    if retrieve is not None:

        async def retrieve_handler(params: m.RetrieveParams, ctx: RequestContext) -> Any:
            if params.filter is not None and filters is not None:
                validate_filter(params.filter, filters)
            result = await federation.retrieve(
                params, deadline=ctx.remaining(), meta=ctx.meta, on_progress=_progress(ctx)
            )
            wire = result.to_wire()
            if ctx.notes:  # what the runtime's gating clamped or degraded (§7.7)
                wire["usage"]["notes"] = [*ctx.notes, *wire["usage"].get("notes", [])]
            return wire

        server.handle("retrieve", retrieve_handler, capability=retrieve)
    graph = graph_capability(members)
    if graph is not None:

        async def graph_handler(params: m.GraphParams, ctx: RequestContext) -> Any:
            fields = {key: value for key, value in _fields(params).items() if key != "op"}
            result = await federation.graph(
                params.op,
                deadline=ctx.remaining(),
                meta=ctx.meta,
                on_progress=_progress(ctx),
                **fields,
            )
            return result.to_wire()

        server.handle("graph", graph_handler, capability=graph)
    register_routes(server, federation)
    return server


def _progress(ctx: RequestContext) -> Any:
    def report(fraction: float, message: str) -> None:
        ctx.progress(fraction, "federate", message)  # §9: dropped unless the caller asked

    return report


def _fields(params: m.GraphParams) -> dict[str, Any]:
    return {
        name: getattr(params, name)
        for name in params.__struct_fields__
        if getattr(params, name) is not None
    }
