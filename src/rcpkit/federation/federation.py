"""The Federation facade (§16): fan out, fuse, and report what every engine did.

>>> async with Federation.load("rcp.json") as federation:
...     result = await federation.retrieve("hybrid retrieval", k=5)
...     for hit in result.hits:
...         print(hit.meta["engine"], hit.id, hit.score)
...     print(result.degraded, result.notes)

An originating client (no ``identity``) sends ``_meta.federation`` with the
full hop budget; an aggregator (a gateway, with an ``identity``) decrements
it and appends itself (§16.2). ``fusion`` in a federated ``retrieve`` chooses
the cross-engine fusion and is not forwarded; ``fusion.weights`` are keyed
by engine id and override the registry's weights.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import msgspec

from rcpkit.client.api import build_params
from rcpkit.client.errors import OptionUnsupported
from rcpkit.client.wire import parse_result, to_wire
from rcpkit.federation.calibration import SessionCalibration
from rcpkit.federation.connect import Connector, connect_engine
from rcpkit.federation.cursors import CursorSigner, FusedPage, fingerprint
from rcpkit.federation.discovery import discover
from rcpkit.federation.engines import EnginePool, EngineState
from rcpkit.federation.fanout import (
    Collected,
    Progress,
    assemble,
    collect,
    plan_for,
    raise_if_nothing_answered,
)
from rcpkit.federation.fusion import EngineHits, FusionConfig, fuse_hits
from rcpkit.federation.graphs import merge_graph
from rcpkit.federation.health import HealthPolicy
from rcpkit.federation.hops import DEFAULT_DEPTH, Hop, downstream_budget
from rcpkit.federation.registry import Registry, load_registry
from rcpkit.federation.results import EngineFailure, FederatedResult
from rcpkit.federation.routing import Routed, route_call
from rcpkit.observe.trace import new_trace_id, trace_id_of
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Wire
from rcpkit.protocol.content import QueryInput
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Federation"]


class Federation:
    """Many engines behind one ``retrieve`` (and ``graph``)."""

    def __init__(
        self,
        registry: Registry,
        *,
        identity: str | None = None,
        inherited_path: tuple[str, ...] = (),
        connector: Connector | None = None,
        connect_timeout: float = 10.0,
        engine_timeout: float | None = 10.0,
        query_timeout: float = 30.0,
        reconnect_after: float = 5.0,
        fusion: FusionConfig | None = None,
        overfetch: int = 2,
        default_depth: int = DEFAULT_DEPTH,
        health: HealthPolicy | None = None,
        cursors: CursorSigner | None = None,
    ) -> None:
        self.registry = registry
        self._connect_timeout = connect_timeout
        # Signs the cursors of fused results (the gateway's own, not an engine's).
        self.cursors = cursors or CursorSigner()
        self.identity = identity
        self.engine_timeout = engine_timeout
        self.query_timeout = query_timeout
        self.fusion = fusion or FusionConfig()
        # Calibrated fusion's per-engine score samples, kept over the session (§16.3).
        self.calibration = SessionCalibration()
        self.overfetch = max(1, overfetch)
        self.default_depth = default_depth
        # Never forward to ourselves or to whoever spawned us (§16.2).
        self.excluded = frozenset({*inherited_path, *([identity] if identity else [])})
        path = (*inherited_path, *([identity] if identity else []))
        self._pool = EnginePool(
            list(registry.engines),
            connector
            or (
                lambda spec: connect_engine(
                    spec, connect_timeout=connect_timeout, federation_path=path
                )
            ),
            connect_timeout=connect_timeout,
            reconnect_after=reconnect_after,
            health=health,
        )

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> Federation:
        return cls(load_registry(path), **options)

    # --- connecting (§16.1) ---

    async def connect(self) -> list[EngineFailure]:
        """Connect every engine (bounded). A required engine's failure raises; others are
        returned (and retried on a later query once the reconnect cool-down has passed)."""
        await self._pool.connect_all()
        hop = Hop.incoming(None, self.default_depth).forward(self.identity)
        if hop is not None:
            await discover(self._pool, self.excluded, hop, self._connect_timeout)
        failures = []
        for state in self._pool.states:
            if state.error is None:
                continue
            if state.spec.required:
                await self.close()
                raise RCPError(
                    state.error.code,
                    f"required engine '{state.id}' is unavailable: {state.error.message}",
                    extra={"engine": state.id},
                )
            failures.append(EngineFailure.of(state.id, state.error))
        return failures

    async def close(self) -> None:
        await self._pool.close()

    async def __aenter__(self) -> Federation:
        await self.connect()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # --- what the federation can do (§16.4) ---

    @property
    def engines(self) -> list[EngineState]:
        return list(self._pool.states)

    @property
    def pool(self) -> EnginePool:
        """The engines' connections and health (the gateway observes its calls here)."""
        return self._pool

    @property
    def members(self) -> list[EngineState]:
        """Engines we know and would ever forward to (never ourselves, never an expanded
        aggregator: its engines are members in its place)."""
        return self._members()

    def _members(self) -> list[EngineState]:
        """Engines we know and would ever forward to."""
        return [
            s
            for s in self._pool.states
            if s.known and s.identity not in self.excluded and not s.expanded
        ]

    @property
    def effective_capabilities(self) -> frozenset[str]:
        """§16.4: the union — the federation can do X if any engine can."""
        return frozenset(key for state in self._members() for key in state.capabilities)

    @property
    def guaranteed_capabilities(self) -> frozenset[str]:
        """§16.4: the intersection — what every engine can do."""
        sets = [frozenset(state.capabilities) for state in self._members()]
        return frozenset.intersection(*sets) if sets else frozenset()

    def catalog_wire(self, *, endpoints: bool = True) -> list[dict[str, Any]]:
        """``catalog``, each entry with ``_meta.health``: up or down (and why), demoted, p50."""
        entries = []
        by_id = {state.id: state for state in self._pool.states}
        for entry in self.catalog(endpoints=endpoints):
            state = by_id[entry.id]
            health: dict[str, Any] = {"up": state.live}
            if state.error is not None and not state.live:
                health["error"] = {"code": int(state.error.code), "message": state.error.message}
            if state.health is not None:
                health.update(state.health.to_wire())
            entries.append({**msgspec.to_builtins(entry), "_meta": {"health": health}})
        return entries

    def catalog(self, *, endpoints: bool = True) -> list[m.CatalogEngine]:
        """§7.13 entries: each known engine's identity, capabilities and (optionally) endpoint."""
        return [
            m.CatalogEngine(
                id=state.id,
                server=state.server,
                capabilities=state.capabilities,
                endpoint=state.spec.public_endpoint() if endpoints else None,
            )
            for state in self._pool.states
            if state.server is not None
        ]

    # --- federated calls ---

    async def retrieve(
        self,
        query: QueryInput | m.RetrieveParams,
        *,
        k: int = 10,
        deadline: float | None = None,
        meta: Mapping[str, Any] | None = None,
        on_progress: Progress | None = None,
        **fields: Any,
    ) -> FederatedResult:
        """§16.2–16.3: ``retrieve`` on every engine advertising it, fused.

        ``deadline``: seconds left for the whole call (default ``query_timeout``);
        ``meta``: the incoming ``_meta`` (its ``federation`` hop is honoured).
        """
        if isinstance(query, m.RetrieveParams):
            params = query
        else:
            params = build_params(m.RetrieveParams, query=query, k=k, **fields)
        wire = to_wire("retrieve", params)
        query = fingerprint(wire)
        page = FusedPage() if params.cursor is None else self.cursors.open(params.cursor, query)
        wire.pop("cursor", None)
        fusion = self._fusion_for(params.fusion)
        # Both are in the federation's own terms: fusion across engines, and minScore
        # on the fused scale (§4.6: a server's own scale), so neither goes downstream.
        wire.pop("fusion", None)
        wire.pop("minScore", None)
        depth = page.offset + params.k  # the fused prefix this page ends
        wire["k"] = depth * self.overfetch
        collected = await self._collect(
            "retrieve",
            wire,
            "retrieve",
            deadline,
            meta,
            on_progress,
            m.RetrieveResult,
            overrides={engine: {"indexVersion": v} for engine, v in page.pins.items()},
        )
        lists = [self._engine_hits(engine, result) for engine, result in collected.answers.items()]
        fused = fuse_hits(lists, depth, fusion, self.calibration)
        hits = fused.hits[page.offset :]
        if params.min_score is not None:
            hits = [hit for hit in hits if hit.score >= params.min_score]
        result = assemble(collected, lists, hits, [*fused.notes], fused.method)
        if len(fused.hits) >= depth:  # a full page: there may be more
            pins = page.pins or self._pins(collected)
            next_page = FusedPage(depth, pins)
            result = dataclasses.replace(result, next_cursor=self.cursors.issue(query, next_page))
        return result

    def _pins(self, collected: Collected) -> dict[str, str]:
        """Each snapshot-capable engine's indexVersion on the first page (§7.6)."""
        pins = {}
        for engine, result in collected.answers.items():
            state = next(state for state in self._pool.states if state.id == engine)
            retrieve = state.capabilities.get("retrieve")
            snapshots = isinstance(retrieve, Mapping) and retrieve.get("snapshots")
            if snapshots and result.index_version is not None:
                pins[engine] = result.index_version
        return pins

    async def graph(
        self,
        op: str,
        *,
        deadline: float | None = None,
        meta: Mapping[str, Any] | None = None,
        on_progress: Progress | None = None,
        **fields: Any,
    ) -> FederatedResult:
        """§16.4: ``graph`` on the engines advertising ``op``; hits fused, the rest merged."""
        params = build_params(m.GraphParams, op=op, **fields)
        wire = to_wire("graph", params)
        if params.cursor is not None:
            raise OptionUnsupported("graph", "cursor", "pagination across engines")

        def wants(capabilities: Mapping[str, Any]) -> bool:
            graph = capabilities.get("graph")
            return isinstance(graph, Mapping) and op in (graph.get("ops") or [])

        collected = await self._collect(
            "graph", wire, wants, deadline, meta, on_progress, m.GraphResult
        )
        results: dict[str, m.GraphResult] = dict(collected.answers)
        lists = [
            EngineHits(engine, result.hits or [], self._weight(engine), None)
            for engine, result in results.items()
        ]
        fused = fuse_hits(lists, params.k, self.fusion, self.calibration)
        result = assemble(collected, lists, fused.hits, [*fused.notes], fused.method)
        result.graph.update(merge_graph(results))
        return result

    async def _collect(
        self,
        method: str,
        wire: dict[str, Any],
        capability: str | Any,
        deadline: float | None,
        meta: Mapping[str, Any] | None,
        on_progress: Progress | None,
        result_type: type[Wire],
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Collected:
        wants = capability if callable(capability) else (lambda caps: capability in caps)
        hop = Hop.incoming(meta, self.default_depth).forward(self.identity)
        if hop is None:
            collected = Collected()
            collected.notes.append("federation depth exhausted: not forwarded (§16.2)")
            return collected
        remaining = deadline if deadline is not None else self.query_timeout
        plan = plan_for(
            method,
            wire,
            wants,
            hop,
            remaining,
            self.engine_timeout,
            lambda raw: parse_result(method, result_type, raw),
            trace_id_of(dict(meta or {})) or new_trace_id(),
        )
        if overrides:
            plan = dataclasses.replace(plan, overrides=overrides)
        collected = await collect(self._pool, plan, on_progress)
        if not collected.answers:
            raise_if_nothing_answered(method, collected, self._pool.states, wants)
        return collected

    async def call_one(
        self,
        method: str,
        wire: dict[str, Any],
        *,
        engine: str | None = None,
        deadline: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Routed:
        """A method one engine answers (``embed``, ``rerank``, ``index/add``, …): the named
        ``engine``, or the highest-priority live engine advertising it, failing over to
        engines that advertise the very same capability metadata (§16.1 Selector rules)."""
        hop = Hop.incoming(meta, self.default_depth).forward(self.identity)
        if hop is None:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE, "federation depth exhausted: not forwarded (§16.2)"
            )
        remaining = deadline if deadline is not None else self.query_timeout
        return await route_call(
            self._pool,
            self._members(),
            method,
            wire,
            engine=engine,
            hop=hop,
            budget=downstream_budget(remaining, self.engine_timeout),
            trace_id=trace_id_of(dict(meta or {})) or new_trace_id(),
        )

    def _engine_hits(self, engine: str, result: m.RetrieveResult) -> EngineHits:
        state = next(state for state in self._pool.states if state.id == engine)
        retrieve = state.capabilities.get("retrieve")
        floor = retrieve.get("scoreFloor") if isinstance(retrieve, Mapping) else None
        if not isinstance(floor, int | float) or isinstance(floor, bool):
            floor = None
        return EngineHits(engine, result.hits, self._weight(engine), floor, result.usage)

    def _weight(self, engine: str) -> float:
        spec = self.registry.get(engine)
        return spec.weight if spec is not None else 1.0

    def _fusion_for(self, requested: m.Fusion | None) -> FusionConfig:
        if requested is None:
            return self.fusion
        return FusionConfig(
            method=requested.method or self.fusion.method,
            rrf_k=requested.rrf_k or self.fusion.rrf_k,
            dedup=self.fusion.dedup,
            weights={**self.fusion.weights, **(requested.weights or {})},
        )
