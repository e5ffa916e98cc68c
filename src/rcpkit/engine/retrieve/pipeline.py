"""Reads: the retrieve pipeline (§3, §7.7): recall → feedback → proximity → smoothing → rerank →
recency → MMR → pack.

Every stage reports progress (§9), honours cancellation and the deadline at
its checkpoints, and runs against one pinned index version (§7.7.1), so a
page fetched later with a cursor continues exactly the same ranking.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

import msgspec
import numpy as np

from rcpkit.engine.engine import Engine
from rcpkit.engine.query import GRAPH_UNITS, Query
from rcpkit.engine.request import EngineRequest
from rcpkit.engine.rerank import HybridReranker
from rcpkit.engine.retrieve import prf, proximity, smoothing
from rcpkit.engine.retrieve.cursors import (
    Cursor,
    decode_cursor,
    encode_cursor,
    resolve_version,
)
from rcpkit.engine.retrieve.duplicates import collapse_duplicates
from rcpkit.engine.retrieve.graph_units import graph_hits
from rcpkit.engine.retrieve.packing import UNIT_KEYS, build_hits, merge_units, units_head
from rcpkit.engine.retrieve.recall import Recalled, recall, recall_depth
from rcpkit.engine.retrieve.rescore import rescore_indexed
from rcpkit.engine.retrieve.stages import Candidate, mmr, pack_to_budget, recency_decay
from rcpkit.engine.retrieve.unit_bodies import with_unit_bodies
from rcpkit.engine.store.base import ChunkRow
from rcpkit.engine.store.deadline import deadline_scope
from rcpkit.engine.store.partial import partial_scope
from rcpkit.engine.store.snapshot import fetch_rows, one_read
from rcpkit.engine.transform import Transformed, merge_rankings
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit
from rcpkit.protocol.errors import RCPError
from rcpkit.protocol.fusion import rrf_score

__all__ = ["DEFAULT_RERANK_TOP_N", "retrieve"]

DEFAULT_RERANK_TOP_N = 20
_RERANK_SECONDS_PER_PASSAGE = 0.012  # measured MaxSim cost with MiniLM on 2 cores
T = TypeVar("T")


class _Stages:
    """Times each stage for ``usage.stages`` and reports progress as it goes."""

    def __init__(self, ctx: EngineRequest) -> None:
        self.ctx = ctx
        self.timings: dict[str, float] = {}

    def run(
        self,
        name: str,
        progress: float,
        work: Callable[[], T],
        partial: Callable[[T], dict[str, object]] | None = None,
    ) -> T:
        """Run one stage; then a checkpoint and one progress frame (§9 partial hits if asked)."""
        started = time.perf_counter()
        result = work()
        self.timings[name] = round((time.perf_counter() - started) * 1000, 3)
        self.ctx.check_cancelled()
        # §17.1: in-band, only to a client that opted into logs at debug level.
        self.ctx.log(
            "debug", f"{name}: {self.timings[name]} ms", {"ms": self.timings[name]}, "pipeline"
        )
        if self.ctx.streaming:
            message = f"done in {self.timings[name]:.1f} ms"  # the frame's stage names it (§9)
            extra = partial(result) if partial else None
            self.ctx.progress(progress, name, message, extra)
        return result


def retrieve(engine: Engine, query: Query, ctx: EngineRequest) -> m.RetrieveResult:
    # §13.1: the store's reads stop at the request's deadline too, not only the pipeline's
    # checkpoints (a PostgreSQL statement is bounded by it; see store.deadline).
    # §16.2: a store that can answer from part of itself (shards, one down) says what
    # it left out; the caller is told, in `_meta.degraded` and `usage.notes`.
    with deadline_scope(ctx.deadline), partial_scope() as left_out:
        result = _retrieve(engine, query, ctx)
    if not left_out:
        return result
    usage = result.usage
    if usage is not None:
        notes = [*(usage.notes or []), *(part.note() for part in left_out)]
        usage = msgspec.structs.replace(usage, notes=notes)
    meta = {**(result.meta or {}), "degraded": [part.to_wire() for part in left_out]}
    return msgspec.structs.replace(result, usage=usage, meta=meta)


def _retrieve(engine: Engine, query: Query, ctx: EngineRequest) -> m.RetrieveResult:
    started = time.perf_counter()
    text = query.text
    if not text.strip() and (query.vector is None or query.effective_mode != "dense"):
        # Only the dense arm can rank by a vector alone (an index of your own vectors).
        raise RCPError.invalid_params("query", "the query has no text")
    if query.unit in GRAPH_UNITS and engine.graphs is not None:
        return _through_graph(engine, query, text, ctx, started)
    # §7.7.1: the version check and every read in one snapshot, so another process's
    # garbage collection cannot slip between them (a pinned read serves that version);
    # within it, the stages' overlapping rows are read once.
    with one_read(engine.store):
        result = _read(engine, query, text, ctx, started)
    if query.session_id:
        engine.trajectories.record(ctx.tenant, query.session_id, [str(h.id) for h in result.hits])
    return result


def _read(
    engine: Engine,
    query: Query,
    text: str,
    ctx: EngineRequest,
    started: float,
    lean: bool = True,
    wider: int | None = None,
) -> m.RetrieveResult:
    """One page of ``query``; ``wider``: the recall pool a first try found too small."""
    notes = len(ctx.notes)
    cursor = _cursor(engine, query, ctx.tenant)
    pinned = cursor.version if cursor else query.index_version
    served = resolve_version(engine.store, pinned, ctx.tenant)  # §15.6: the tenant's versions
    version = served.version
    offset = cursor.offset if cursor else 0
    stages = _Stages(ctx)
    depth = offset + query.k
    tenant = ctx.tenant
    # Read once at the start, so concurrent feedback cannot change this result (§7.16).
    quarantined = engine.feedback.quarantined(tenant)
    seen = engine.trajectories.seen(tenant, query.session_id) if query.session_id else None
    transformed = None
    if isinstance(query.rewrite, str):
        method = query.rewrite
        transformed = stages.run(
            "transform", 0.1, lambda: engine.rewriter.run(method, text, None, ctx)
        )
        ctx.notes.extend(transformed.notes)
    pool = _lean_pool(engine, query, depth, bool(quarantined or seen)) if lean else wider
    asked = replace(query, candidate_k=pool) if pool is not None else query
    recalled = stages.run(
        "recall",
        0.4,
        lambda: _recall(engine, asked, text, transformed, version, depth, ctx),
        lambda found: _partial(engine, found.candidates, query.k),
    )

    def feedback(ranked: Recalled) -> Recalled:
        # As deep as the first pass: a widened page's lexical arm stays widened.
        return prf.second_pass(engine, asked, text, ranked, version, depth, ctx)

    def near(ranked: Recalled) -> Recalled:
        boosted = proximity.boosted(engine, text, ranked.candidates, version, tenant)
        return replace(ranked, candidates=boosted)

    def alike(ranked: Recalled) -> Recalled:
        smoothed = smoothing.smoothed(engine, ranked.candidates, ranked.vectors)
        return replace(ranked, candidates=smoothed)

    # The default's rescoring stages (issues 16, 33), in order, each on the ranking so far.
    rescoring = (
        ("feedback", 0.5, prf.applies, feedback),
        ("proximity", 0.55, proximity.applies, near),
        ("smoothing", 0.6, smoothing.applies, alike),
    )
    for name, progress, applies, work in rescoring:
        if transformed is None and applies(engine, query):
            recalled = stages.run(
                name,
                progress,
                partial(work, recalled),
                lambda found: _partial(engine, found.candidates, query.k),
            )
    candidates = recalled.candidates
    if query.min_score is not None:
        candidates = [c for c in candidates if c.score >= query.min_score]
    reranked = 0
    if query.rerank is not None:
        candidates, reranked = stages.run(
            "rerank",
            0.7,
            lambda: _rerank(engine, query, text, candidates, recalled, version, ctx),
            lambda done: _partial(engine, done[0], query.k),
        )
    if query.recency is not None:
        floor = -1.0 if reranked else recalled.floor
        candidates = _recency(engine, query, candidates, floor)
    rows: dict[int, ChunkRow] = {}
    unit = query.unit if query.unit in UNIT_KEYS else "chunk"
    if quarantined or seen or (unit in ("document", "page") and query.mmr_lambda is not None):
        # What is withheld or seen, and MMR's choice, read every candidate's unit.
        rows = fetch_rows(engine.store, [c.key for c in candidates])
        candidates = [c for c in candidates if c.key in rows]
    elif unit in ("document", "page"):
        candidates, rows = units_head(engine.store, candidates, unit, depth + 1)
    if quarantined:
        candidates = _withhold(candidates, rows, quarantined, ctx)
    if unit in ("document", "page"):
        candidates = merge_units(candidates, rows, unit)
        searched = recall_depth(engine, asked, depth)
        floored = query.min_score is not None and any(
            c.score < query.min_score for c in recalled.candidates
        )
        if len(candidates) <= depth and recalled.count >= searched and not floored:
            # §10: the pool's chunks make too few units for this page and the next, and
            # recall stopped at the pool, not at the corpus: a wider pool finds the rest
            # (it ends: recall never counts more chunks than the version holds). Not
            # past minScore: what a wider pool adds ranks below what it already cut.
            del ctx.notes[notes:]
            return _read(engine, query, text, ctx, started, lean=False, wider=2 * searched)
    if seen:
        # §7.7.3: a trajectory keeps finding new evidence.
        unit_of = UNIT_KEYS[unit]
        candidates = [c for c in candidates if unit_of(rows[c.key]) not in seen]
    if engine.config.collapse_duplicates and unit not in ("document", "page"):
        # MMR picks from the whole list, so it gets the whole list collapsed.
        collapse_depth = len(candidates) if query.mmr_lambda is not None else depth
        fetch = partial(fetch_rows, engine.store)
        similarity = engine.config.duplicate_similarity
        collapsed = collapse_duplicates(candidates, fetch, collapse_depth, similarity)
        candidates, rows = collapsed.candidates, {**rows, **collapsed.rows}
        if pool is not None and len(candidates) <= depth and recalled.count >= pool:
            # Copies left the lean pool short of the page: recall the whole pool.
            del ctx.notes[notes:]
            return _read(engine, query, text, ctx, started, lean=False)
        if collapsed.dropped:
            plural = "s" if collapsed.dropped != 1 else ""
            ctx.notes.append(f"collapsed {collapsed.dropped} near-duplicate chunk{plural}")
    if query.mmr_lambda is not None:
        lambda_ = query.mmr_lambda
        candidates = stages.run(
            "mmr", 0.85, lambda: mmr(candidates, recalled.vectors, lambda_, depth + 1)
        )
    page = candidates[offset:depth]
    missing = [c.key for c in page if c.key not in rows]
    rows.update(fetch_rows(engine.store, missing) if missing else {})
    page = [c for c in page if c.key in rows]  # a chunk collected since recall is dropped
    if unit in ("document", "page"):
        # §7.7.2: the unit's own text, before the budget counts it.
        page = with_unit_bodies(engine.store, page, rows, unit)
    tokens = None
    ahead = depth  # where the next page starts: after the last candidate this one used
    if query.token_budget is not None:
        packed, tokens = _budget(engine, page, rows, query.token_budget, ctx)
        if len(packed) < len(page):
            # §10: the next page continues at the first hit the budget left out, not
            # at offset + k, or the hits between them are never returned. A first hit
            # larger than the whole budget is passed over, so paging always advances.
            ahead = candidates.index(page[len(packed)], offset) + (0 if packed else 1)
        page = packed
    hits = stages.run("pack", 1.0, lambda: build_hits(engine, page, rows, query, recalled, ctx))
    next_cursor = None
    if len(candidates) > ahead and engine.capabilities_pagination:
        cursor_ahead = Cursor(served.shown, ahead, query.digest(tenant))
        next_cursor = encode_cursor(cursor_ahead, engine.cursor_secret)
    usage = m.Usage(
        candidates=recalled.count,
        reranked=reranked or None,
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        tokens=tokens,
        notes=ctx.notes or None,
        stages=stages.timings,
    )
    return m.RetrieveResult(
        hits=hits,
        next_cursor=next_cursor,
        index_version=str(served.shown),
        usage=usage,
        rewritten_query=transformed.rewritten if transformed else None,
    )


def _through_graph(
    engine: Engine, query: Query, text: str, ctx: EngineRequest, started: float
) -> m.RetrieveResult:
    """§7.7.2 graph granularities: answered by the knowledge graph at the latest version."""
    assert engine.graphs is not None
    graph = engine.graphs.of(ctx.tenant)
    embed = engine.embedder(ctx.check_cancelled).embed
    if query.unit == "community":
        found = graph.global_search(text, query.k, query.level or 0, embed)
        hits = [
            Hit(
                id=s.community.id,
                score=s.score,
                text=s.community.summary,
                unit="community",
                level=s.community.level,
                meta={"title": s.community.title},
            )
            for s in found.communities
        ]
    else:
        local = graph.local(text, query.k, 2, query.unit, embed)  # type: ignore[arg-type]
        hits = graph_hits(engine, local.hits)
    usage = m.Usage(
        latency_ms=round((time.perf_counter() - started) * 1000, 3), notes=ctx.notes or None
    )
    return m.RetrieveResult(
        hits=hits[: query.k],
        usage=usage,
        index_version=str(engine.store.tenancy.latest(ctx.tenant)),
    )


def _lean_pool(engine: Engine, query: Query, depth: int, withheld: bool) -> int | None:
    """How many candidates recall needs when nothing after it reads past the page.

    A single-arm retrieve (``mode`` sparse or dense, no learned-sparse arm to fuse)
    with no rerank, MMR, recency, ``minScore``, rewrite, merged unit or withheld
    documents ranks exactly its arm's top: the page, one more for ``nextCursor``
    and a few for collapsed copies are enough. An arm's top ``n`` is the first
    ``n`` of its top ``candidateK`` (exact top-k, ties by key), so every page is the
    same as with the whole pool (issue 31 item 4: a sparse retrieve at 200k chunks
    spent a third of its search scoring candidates 12 to 100). None: the whole pool
    (``candidateK``, or the engine's default), as a client that sets it asks.
    """
    if query.mode not in ("sparse", "dense") or query.candidate_k is not None:
        return None
    if query.mode == "sparse" and engine.config.sparse is not None:
        return None  # SPLADE joins the sparse arm: two lists, fused
    later = (query.rerank, query.mmr_lambda, query.recency, query.min_score, query.rewrite)
    if any(option is not None for option in later) or withheld:
        return None
    if query.unit not in ("chunk", "passage"):
        return None
    return depth + 1 + max(4, depth // 4)


def _recall(
    engine: Engine,
    query: Query,
    text: str,
    transformed: Transformed | None,
    version: int,
    depth: int,
    ctx: EngineRequest,
) -> Recalled:
    """Recall for ``text``, or for each transformed query merged into one ranking."""
    if transformed is None:
        return recall(engine, query, text, version, depth, ctx)
    queries = list(transformed.queries)
    merge = transformed.merge
    if transformed.hypothetical:  # HyDE: the pseudo-document is searched beside the query
        queries.append(transformed.hypothetical)
        merge = "rrf"
    results = [recall(engine, query, q, version, depth, ctx) for q in queries]
    if len(results) == 1:
        return results[0]
    order = merge_rankings(
        merge if merge != "single" else "rrf",
        [[(c.key, c.score) for c in result.candidates] for result in results],
    )
    first = {c.key: c for result in reversed(results) for c in result.candidates}
    merged = [
        Candidate(key, rrf_score(rank), {**first[key].scores, "fused": rrf_score(rank)})
        for rank, key in enumerate(order, 1)
    ]
    vectors = {key: v for result in results for key, v in result.vectors.items()}
    count = len({c.key for result in results for c in result.candidates})
    original = (
        results[0]
        if transformed.queries[0] == text
        else recall(engine, query, text, version, 0, ctx)
    )
    return Recalled(merged, count, 0.0, original.query_vector, vectors)


def _withhold(
    candidates: list[Candidate],
    rows: dict[int, ChunkRow],
    quarantined: frozenset[str],
    ctx: EngineRequest,
) -> list[Candidate]:
    kept = [c for c in candidates if rows[c.key].doc_id not in quarantined]
    if len(kept) < len(candidates):
        ctx.notes.append(f"{len(candidates) - len(kept)} quarantined candidates withheld")
    return kept


def _cursor(engine: Engine, query: Query, tenant: str | None) -> Cursor | None:
    if query.cursor is None:
        return None
    digest = query.digest(tenant)
    cursor = decode_cursor(query.cursor, engine.cursor_secret, digest, engine.store, tenant)
    if query.index_version is not None and query.index_version != str(cursor.version):
        raise RCPError.invalid_params("indexVersion", "conflicts with the cursor's index version")
    return cursor


def _partial(engine: Engine, candidates: list[Candidate], k: int) -> dict[str, object]:
    """§9 partial.hits: the current head, as ids and scores (bodies come with the result)."""
    rows = fetch_rows(engine.store, [c.key for c in candidates[:k]])
    return {
        "hits": [
            {"id": rows[c.key].chunk_id, "score": c.score} for c in candidates[:k] if c.key in rows
        ]
    }


def _rerank(
    engine: Engine,
    query: Query,
    text: str,
    candidates: list[Candidate],
    recalled: Recalled,
    version: int,
    ctx: EngineRequest,
) -> tuple[list[Candidate], int]:
    option = query.rerank
    assert option is not None
    top_n = min(option.top_n or max(query.k, DEFAULT_RERANK_TOP_N), len(candidates))
    top_n = _degrade(top_n, query, ctx)
    if top_n == 0:
        return candidates, 0
    default = "cross-encoder" if engine.config.cross_encoder else "colbert"
    reranker = engine.reranker(option.method or default, ctx.check_cancelled)
    head = candidates[:top_n]
    raw: Any = None
    if isinstance(reranker, HybridReranker):  # rows of this index: scored as recall scores
        vector = recalled.query_vector
        raw = rescore_indexed(engine, query, text, head, vector, version, ctx.tenant)
    if raw is None:
        rows = fetch_rows(engine.store, [c.key for c in head])
        raw = reranker.score(text, [rows[c.key].text for c in head], ctx.check_cancelled)
    for candidate, score in zip(
        head, bounded_scores(engine, reranker.method, text, raw), strict=True
    ):
        candidate.scores["rerank"] = float(score)
        candidate.score = float(score)
    head.sort(key=lambda c: (-c.score, c.key))
    return head + candidates[top_n:], top_n


def bounded_scores(engine: Engine, method: str, text: str, raw: Any) -> list[float]:
    """Rerank scores on [-1, 1], so the advertised scoreFloor holds after a rerank.

    MaxSim is a sum of one cosine per query token: divided by the query's token
    count it is a mean cosine. A cross-encoder logit goes through the logistic.
    """
    values = np.asarray(raw, dtype=np.float64)
    if method == "colbert":
        embedder = engine.embedder()
        tokens = max(1, min(embedder.count_tokens([text])[0], embedder.max_tokens))
        return [float(v) for v in np.clip(values / tokens, -1.0, 1.0)]
    return [float(v) for v in 1.0 / (1.0 + np.exp(-values))]


def _degrade(top_n: int, query: Query, ctx: EngineRequest) -> int:
    """Near the deadline, and only with strict:false: a smaller head, then no rerank."""
    remaining = ctx.remaining()
    if remaining is None or query.strict:
        return top_n
    budget = remaining * 0.8
    smaller = top_n
    while smaller > query.k and smaller * _RERANK_SECONDS_PER_PASSAGE > budget:
        smaller = max(query.k, smaller // 2)
    if smaller * _RERANK_SECONDS_PER_PASSAGE > budget:
        ctx.notes.append("rerank skipped: the deadline is too near")
        return 0
    if smaller < top_n:
        ctx.notes.append(f"rerank head cut from {top_n} to {smaller} to meet the deadline")
    return smaller


def _recency(
    engine: Engine, query: Query, candidates: list[Candidate], floor: float
) -> list[Candidate]:
    recency = query.recency
    assert recency is not None
    if engine.config.filter_fields.get(recency.field) != "date":
        raise RCPError.invalid_params("recency.field", f"`{recency.field}` is not a date field")
    dates = engine.dates_of([c.key for c in candidates], recency.field)
    now_ms = int(time.time() * 1000)
    return recency_decay(candidates, dates, recency.half_life_days, now_ms, floor)


def _budget(
    engine: Engine,
    page: list[Candidate],
    rows: dict[int, ChunkRow],
    budget: int,
    ctx: EngineRequest,
) -> tuple[list[Candidate], int]:
    texts = [c.text if c.text is not None else rows[c.key].text for c in page]
    counter = engine.embedder(ctx.check_cancelled).count_tokens
    fits, tokens = pack_to_budget(texts, counter, budget)
    if fits < len(page):
        ctx.notes.append(f"tokenBudget {budget} reached after {fits} hits")
    return page[:fits], tokens
