"""L1: retrieval that works (§7.7, §8, §14.2) — modes, k, minScore, filters, citations."""

from __future__ import annotations

from typing import Any

from rcpkit.check.context import Context, scores_descend
from rcpkit.check.model import Check, Failed, Skipped

__all__ = ["RETRIEVE"]

_ALL_OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists")


def _retrieves(ctx: Context) -> None:
    ctx.require("retrieve")


def _mode(mode: str) -> Any:
    def applies(ctx: Context) -> None:
        ctx.require("retrieve")
        if mode not in ctx.listed("retrieve", "modes"):
            raise Skipped(f"mode {mode!r} is not advertised")

    async def run(ctx: Context) -> str | None:
        hits = await ctx.hits({"query": ctx.query, "k": 5, "mode": mode})
        if not hits:
            raise Failed(f"mode {mode!r} returned no hits for {ctx.query!r} (try --query)")
        scores_descend(hits)
        return f"{len(hits)} hits"

    return applies, run


async def returns_hits(ctx: Context) -> str | None:
    hits = await ctx.baseline_hits()
    if not hits:
        raise Failed(f"no hits for {ctx.query!r}; pass --query with words from the corpus")
    scores_descend(hits)
    return f"{len(hits)} hits, scores descending"


async def k_honoured(ctx: Context) -> str | None:
    for k in (1, 2):
        hits = await ctx.hits({"query": ctx.query, "k": k})
        if len(hits) > k:
            raise Failed(f"k={k} returned {len(hits)} hits")
    return None


def _has_max_k(ctx: Context) -> None:
    ctx.require("retrieve")
    if not isinstance(ctx.cap("retrieve").get("maxK"), int):
        raise Skipped("retrieve.maxK is not advertised")


async def k_clamped(ctx: Context) -> str | None:
    max_k = int(ctx.cap("retrieve")["maxK"])
    hits = await ctx.hits({"query": ctx.query, "k": max_k + 1})
    if len(hits) > max_k:
        raise Failed(f"k above maxK {max_k} returned {len(hits)} hits")
    return f"k={max_k + 1} answered (clamped to maxK {max_k})"


async def k_invalid(ctx: Context) -> str | None:
    for k in (-1, 2.5, "3"):
        await ctx.error("retrieve", {"query": ctx.query, "k": k}, {-32602})
    return None


def _funnel_probes(ctx: Context) -> list[tuple[dict[str, Any], str]]:
    """Requests that break §3.3 ``candidateK >= rerank.topN >= k``, with the knob to name."""
    q = ctx.query
    probes: list[tuple[dict[str, Any], str]] = [
        ({"query": q, "k": 10, "candidateK": 2}, "candidateK")
    ]
    if ctx.cap("retrieve").get("rerankBuiltin"):
        methods = ctx.listed("rerank", "methods")
        rerank: dict[str, Any] = {"method": methods[0]} if methods else {}
        probes.append(({"query": q, "k": 10, "rerank": {**rerank, "topN": 5}}, "rerank.topN"))
        probes.append(
            ({"query": q, "k": 5, "candidateK": 6, "rerank": {**rerank, "topN": 8}}, "candidateK")
        )
    return probes


async def funnel(ctx: Context) -> str | None:
    # §3.3/§7.7: a MUST on the request; §12.1: data.field is the offending params path.
    for params, knob in _funnel_probes(ctx):
        reply = await ctx.error("retrieve", params, {-32602})
        data = reply["error"].get("data")
        field = data.get("field") if isinstance(data, dict) else None
        if field != knob:
            raise Failed(f"{params}: error.data.field is {field!r}, expected {knob!r}")
    return None


async def min_score(ctx: Context) -> str | None:
    hits = await ctx.baseline_hits()
    if len(hits) < 2:
        raise Skipped("needs two hits for the probe query")
    threshold = float(hits[len(hits) // 2]["score"])
    kept = await ctx.hits({"query": ctx.query, "k": 5, "minScore": threshold})
    below = [hit["score"] for hit in kept if float(hit["score"]) < threshold - 1e-9]
    if below:
        raise Failed(f"minScore {threshold} returned scores {below}")
    if not kept:
        raise Failed(f"minScore {threshold} (a returned score) dropped every hit")
    return None


def _fields(ctx: Context) -> dict[str, str]:
    fields = ctx.cap("filter").get("fields")
    if isinstance(fields, dict):
        return {str(name): str(kind) for name, kind in fields.items()}
    if isinstance(fields, list):
        return {str(name): "keyword" for name in fields}
    return {}


def _filters(ctx: Context) -> None:
    ctx.require("retrieve")
    ctx.require("filter")
    if not _fields(ctx):
        raise Skipped("filter advertises no fields")


def _allowed(ctx: Context, op: str) -> bool:
    operators = ctx.cap("filter").get("operators")
    return not isinstance(operators, list) or op in operators


def _matchable(ctx: Context, hits: list[dict[str, Any]]) -> tuple[str, Any] | None:
    """An advertised field and a scalar value some hit carries in ``meta``."""
    if not _allowed(ctx, "eq"):
        return None
    for hit in hits:
        meta = hit.get("meta")
        for name in _fields(ctx):
            value = meta.get(name) if isinstance(meta, dict) else None
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return name, value
    return None


async def filter_applied(ctx: Context) -> str | None:
    found = _matchable(ctx, await ctx.baseline_hits())
    if found is None:
        name = next(iter(_fields(ctx)))
        op = "exists" if _allowed(ctx, "exists") else "eq"
        probe = {"field": name, "op": op, "value": True if op == "exists" else "x"}
        await ctx.hits({"query": ctx.query, "k": 3, "filter": probe})
        return f"accepted {name} {op} (no hit carries an advertised field in meta to verify)"
    name, value = found
    clause = {"field": name, "op": "eq", "value": value}
    kept = await ctx.hits({"query": ctx.query, "k": 5, "filter": clause})
    if not kept:
        raise Failed(f"filter {clause} dropped the hit that matches it")
    for other in kept:
        meta = other.get("meta")
        seen = meta.get(name, value) if isinstance(meta, dict) else value
        if seen != value:
            raise Failed(f"filter {clause} let through {name}={seen!r}")
    return f"{name} eq {value!r}"


async def filter_unknown_field(ctx: Context) -> str | None:
    clause = {"field": "rcpcheck_not_a_field", "op": "eq", "value": "x"}
    await ctx.error("retrieve", {"query": ctx.query, "filter": clause}, {-32602})
    return None


def _missing_operator(ctx: Context) -> str | None:
    operators = ctx.cap("filter").get("operators")
    if not isinstance(operators, list):
        return None
    return next((op for op in _ALL_OPERATORS if op not in operators), None)


def _filters_some_operators(ctx: Context) -> None:
    _filters(ctx)
    if _missing_operator(ctx) is None:
        raise Skipped("every operator is advertised")


async def filter_operator(ctx: Context) -> str | None:
    op = _missing_operator(ctx)
    name = next(iter(_fields(ctx)))
    clause = {"field": name, "op": op, "value": "x"}
    await ctx.error("retrieve", {"query": ctx.query, "filter": clause}, {-32005})
    return f"{op!r} → -32005"


async def filter_empty_combinator(ctx: Context) -> str | None:
    for combinator in ("and", "or"):
        await ctx.error("retrieve", {"query": ctx.query, "filter": {combinator: []}}, {-32602})
    return None


def _cites(ctx: Context) -> None:
    ctx.require("retrieve")
    ctx.require("citations")


async def citations(ctx: Context) -> str | None:
    hits = await ctx.baseline_hits()
    if not hits:
        raise Skipped("no hits to inspect")
    for hit in hits:
        citation = hit.get("citation")
        if not isinstance(citation, dict) or not isinstance(citation.get("source"), str):
            raise Failed(f"hit {hit.get('id')!r} carries no citation with a source")
    return None


def _l1(id: str, title: str, section: str, run: Any, applies: Any = _retrieves) -> Check:
    return Check(id, "L1", title, section, run, applies)


RETRIEVE = [
    _l1("retrieve-hits", "retrieve returns hits, scores descending", "§7.7", returns_hits),
    *(
        _l1(f"retrieve-{mode}", f"mode {mode!r} returns ordered hits", "§7.7, §14.2", run, applies)
        for mode in ("dense", "sparse", "hybrid")
        for applies, run in [_mode(mode)]
    ),
    _l1("k-honoured", "never more than k hits", "§7.7", k_honoured),
    _l1("k-clamped", "k above maxK is clamped, not rejected", "§7.7, §12", k_clamped, _has_max_k),
    _l1("k-invalid", "a negative or non-integer k is -32602", "§12", k_invalid),
    _l1(
        "funnel",
        "candidateK >= rerank.topN >= k is enforced: -32602 naming the knob",
        "§3.3, §7.7",
        funnel,
    ),
    _l1("min-score", "minScore is honoured", "§7.7, §14.2", min_score),
    _l1(
        "filter-applied",
        "a filter on an advertised field is applied",
        "§8",
        filter_applied,
        _filters,
    ),
    _l1(
        "filter-unknown-field",
        "a filter on an unadvertised field is -32602",
        "§8",
        filter_unknown_field,
        _filters,
    ),
    _l1(
        "filter-operator",
        "an unadvertised filter operator is -32005",
        "§8",
        filter_operator,
        _filters_some_operators,
    ),
    _l1("filter-empty", "an empty and/or is -32602", "§8", filter_empty_combinator, _filters),
    _l1("citations", "hits carry citations", "§7.7, §14.2", citations, _cites),
]
