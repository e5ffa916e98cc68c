"""Merging the non-hit parts of federated ``graph`` answers (§7.9).

Hits are fused like ``retrieve`` hits; summaries are joined, communities
and followups concatenated in registry order (followups de-duplicated),
nodes keep their best score and edges their first weight.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from rcpkit.protocol import messages as m

__all__ = ["merge_graph"]


def merge_graph(results: Mapping[str, m.GraphResult]) -> dict[str, Any]:
    """The wire fields (besides ``hits``) of one merged graph answer."""
    merged: dict[str, Any] = {}
    summaries = [f"[{engine}] {r.summary}" for engine, r in results.items() if r.summary]
    if summaries:
        merged["summary"] = "\n\n".join(summaries)
    communities = [
        {**msgspec.to_builtins(community), "engine": engine}
        for engine, result in results.items()
        for community in result.communities or []
    ]
    if communities:
        merged["communities"] = communities
    followups = list(
        dict.fromkeys(item for result in results.values() for item in result.followups or [])
    )
    if followups:
        merged["followups"] = followups
    nodes: dict[str, m.GraphNode] = {}
    for result in results.values():
        for node in result.nodes or []:
            known = nodes.get(node.id)
            if known is None or (node.score or 0.0) > (known.score or 0.0):
                nodes[node.id] = node
    if nodes:
        merged["nodes"] = msgspec.to_builtins(list(nodes.values()))
    edges: dict[tuple[str, str], m.GraphEdge] = {}
    for result in results.values():
        for edge in result.edges or []:
            edges.setdefault((edge.src, edge.dst), edge)
    if edges:
        merged["edges"] = msgspec.to_builtins(list(edges.values()))
    return merged
