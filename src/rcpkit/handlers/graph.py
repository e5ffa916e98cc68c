"""The ``graph`` method (§7.9): local, global, drift, communities, neighbors → wire types."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rcpkit.engine.engine import Engine
from rcpkit.engine.graph import LOCAL_UNITS, KnowledgeGraph, Unit
from rcpkit.engine.models import EmbedKind, Vectors
from rcpkit.engine.retrieve.graph_units import graph_hits
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import text_of
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.context import RequestContext

__all__ = ["graph_handler"]

Embed = Callable[[Sequence[str], EmbedKind], Vectors]


@dataclass(frozen=True, slots=True)
class _Op:
    """One graph call: what every op reads."""

    engine: Engine
    graph: KnowledgeGraph
    params: m.GraphParams
    k: int
    embed: Embed
    ctx: RequestContext


def graph_handler(engine: Engine, params: m.GraphParams, ctx: RequestContext) -> m.GraphResult:
    assert engine.graphs is not None
    graph = engine.graphs.of(ctx.tenant)
    embed = engine.embedder(ctx.check_cancelled).embed
    op = _Op(engine, graph, params, params.k or 10, embed, ctx)
    try:
        return _OPS[params.op](op)
    except ValueError as error:  # the graph library's bounds (hops, k)
        raise RCPError.invalid_params("hops", str(error)) from None


def _query(params: m.GraphParams) -> str:
    query = text_of(params.query) if params.query is not None else ""
    if not query.strip():
        raise RCPError.invalid_params("query", f"op `{params.op}` needs a query")
    return query


def _unit(params: m.GraphParams) -> Unit:
    return next((unit for unit in LOCAL_UNITS if unit == params.unit), "chunk")


def _local(op: _Op) -> m.GraphResult:
    params = op.params
    found = op.graph.local(_query(params), op.k, params.hops or 2, _unit(params), op.embed)
    return m.GraphResult(hits=graph_hits(op.engine, found.hits))


def _global(op: _Op) -> m.GraphResult:
    found = op.graph.global_search(_query(op.params), op.k, op.params.level or 0, op.embed)
    communities = [
        m.Community(
            id=s.community.id,
            summary=s.community.summary,
            score=s.score,
            level=s.community.level,
            title=s.community.title,
        )
        for s in found.communities
    ]
    return m.GraphResult(summary=found.summary, communities=communities)


def _drift(op: _Op) -> m.GraphResult:
    params, session_id = op.params, op.params.session_id
    # §7.7.3: with a sessionId the entities already covered are threaded through.
    state = op.engine.trajectories.state(op.ctx.tenant, session_id) if session_id else {}
    previous = state.get("drift", ())
    covered: tuple[str, ...] = tuple(previous) if isinstance(previous, tuple | list) else ()
    hops = params.hops or 2
    found = op.graph.drift(_query(params), op.k, covered, op.embed, hops, _unit(params))
    followups = list(found.followups)
    if session_id:
        # A trajectory is never offered the same follow-up twice.
        suggested = state.get("followups")
        # A set in memory; a list once the state store kept it as JSON.
        asked = set(suggested) if isinstance(suggested, set | list | tuple) else set()
        followups = [followup for followup in followups if followup not in asked]
        state["drift"] = found.covered
        state["followups"] = asked | set(followups)
        op.engine.trajectories.save_state(op.ctx.tenant, session_id, state)
    return m.GraphResult(hits=graph_hits(op.engine, found.hits), followups=followups)


def _communities(op: _Op) -> m.GraphResult:
    engine, graph, params = op.engine, op.graph, op.params
    offset = _offset(engine, graph, params)
    page = graph.communities(params.level, offset, min(op.k, 100))
    token = None
    if page.next_offset is not None:
        token = _cursor(engine, graph.version, page.next_offset, params.level)
    return m.GraphResult(
        communities=[
            m.Community(id=c.id, level=c.level, summary=c.summary, title=c.title)
            for c in page.communities
        ],
        next_cursor=token,
    )


def _neighbors(op: _Op) -> m.GraphResult:
    params = op.params
    if not params.seed_ids:
        raise RCPError.invalid_params("seedIds", "op `neighbors` needs seedIds")
    found = op.graph.neighbors(params.seed_ids, params.hops or 1, min(op.k, 100))
    return m.GraphResult(
        nodes=[m.GraphNode(id=node.id, score=node.score) for node in found.nodes],
        edges=[m.GraphEdge(src=e.src, dst=e.dst, weight=e.weight) for e in found.edges],
    )


_OPS = {
    "local": _local,
    "global": _global,
    "drift": _drift,
    "communities": _communities,
    "neighbors": _neighbors,
}


def _signature(engine: Engine, body: str) -> str:
    return hmac.new(engine.cursor_secret, body.encode(), hashlib.sha256).hexdigest()[:24]


def _cursor(engine: Engine, version: int, offset: int, level: int | None) -> str:
    body = f"{version}:{offset}:{'' if level is None else level}"
    token = f"{body}:{_signature(engine, body)}"
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def _offset(engine: Engine, graph: KnowledgeGraph, params: m.GraphParams) -> int:
    """§10: a communities cursor is bound to the graph version and the level."""
    if params.cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(params.cursor + "=" * (-len(params.cursor) % 4)).decode()
        version, offset, level, signature = text.split(":")
    except (ValueError, UnicodeDecodeError):
        raise RCPError.invalid_params("cursor", "malformed cursor") from None
    body = f"{version}:{offset}:{level}"
    wanted = "" if params.level is None else str(params.level)
    if not hmac.compare_digest(signature, _signature(engine, body)) or level != wanted:
        raise RCPError.invalid_params("cursor", "this cursor was not issued for this request")
    if int(version) != graph.version:
        raise RCPError(ErrorCode.NOT_FOUND, "the graph changed since; restart pagination")
    return int(offset)
