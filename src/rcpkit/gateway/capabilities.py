"""What a gateway advertises: derived from its engines at start-up (§16.4, STYLE §6).

``retrieve`` and ``graph`` are the union of what the engines offer (a request
an engine cannot serve skips that engine, noted in ``usage.notes``); the
gateway adds ``catalog`` and ``streaming`` of its own. Fused scores are RRF
or normalised sums, never below zero, so ``scoreFloor`` is ``0.0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rcpkit.client.wire import typed_capabilities
from rcpkit.protocol import capabilities as caps

__all__ = ["cites", "filter_capability", "graph_capability", "retrieve_capability"]

_MODES = ("dense", "sparse", "hybrid")


def _union(values: Iterable[Any], order: Iterable[str] | None = None) -> list[Any] | None:
    seen = list(dict.fromkeys(item for value in values for item in (value or [])))
    if order is not None:
        ranked = list(order)
        seen.sort(key=lambda item: ranked.index(item) if item in ranked else len(ranked))
    return seen or None


def _any(values: Iterable[bool | None]) -> bool | None:
    return True if any(value for value in values) else None


def cites(engines: Sequence[Mapping[str, Any]]) -> bool:
    """``citations`` (§6: hits carry ``citation``) holds for fused hits whenever an engine
    retrieves: a hit its engine did not cite is cited by the engine and its id
    (``fusion.attribution``)."""
    return any("retrieve" in engine for engine in engines)


def retrieve_capability(engines: Sequence[Mapping[str, Any]]) -> caps.RetrieveCapability | None:
    """The federated ``retrieve`` metadata, or None when no engine retrieves."""
    typed = [typed_capabilities(engine).retrieve for engine in engines]
    found = [value for value in typed if value is not None]
    if not found:
        return None
    max_ks = [value.max_k for value in found if value.max_k is not None]
    fusion: list[Any] = ["rrf", "weighted"]
    if all(value.score_floor is not None for value in found):
        fusion.append("convex")  # §16.3: only when every engine declares its floor
    return caps.RetrieveCapability(
        max_k=max(max_ks) if max_ks else None,
        modes=_union((value.modes for value in found), _MODES),
        modalities=_union(value.modalities for value in found),
        fusion=fusion,
        mmr=_any(value.mmr for value in found),
        rerank_builtin=_any(value.rerank_builtin for value in found),
        deterministic=True if all(value.deterministic for value in found) else None,
        units=_union(value.units for value in found),
        token_budget=_any(value.token_budget for value in found),
        confidence=_any(value.confidence for value in found),
        recency=_any(value.recency for value in found),
        score_scale="unbounded",
        score_floor=0.0,
    )


def graph_capability(engines: Sequence[Mapping[str, Any]]) -> caps.GraphCapability | None:
    found = [c.graph for c in (typed_capabilities(e) for e in engines) if c.graph is not None]
    ops = _union(value.ops for value in found)
    return caps.GraphCapability(ops=ops) if ops else None


def filter_capability(engines: Sequence[Mapping[str, Any]]) -> caps.FilterCapability | None:
    """The union of the engines' filter fields and operators."""
    found = [c.filter for c in (typed_capabilities(e) for e in engines) if c.filter is not None]
    if not found:
        return None
    typed: dict[str, Any] = {}
    names: list[str] = []
    for value in found:
        if isinstance(value.fields, dict):
            for name, kind in value.fields.items():
                typed.setdefault(name, kind)
        names.extend(value.fields)
    fields: dict[str, Any] | list[str] = (
        typed if all(isinstance(v.fields, dict) for v in found) else list(dict.fromkeys(names))
    )
    operators = None
    if all(value.operators is not None for value in found):
        operators = _union(value.operators for value in found)
    return caps.FilterCapability(fields=fields, operators=operators)
