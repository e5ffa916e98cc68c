"""Reads: the retrieve pipeline of this engine (§3, §7.7): recall → fuse → pack + cite."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rcpkit.engine.analysis import analyze, fts_query
from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import OPERATORS, compile_sqlite, parse_filter
from rcpkit.engine.fusion import FusionOptions, fuse
from rcpkit.engine.models import encode_f32_base64
from rcpkit.engine.store.base import ChunkRow
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Chunk, Citation, Hit, Trust, text_of
from rcpkit.protocol.errors import RCPError
from rcpkit.server.context import RequestContext

__all__ = ["MAX_QUERY_TERMS", "SCORE_FLOORS", "retrieve"]

# §6.1 scoreFloor per arm: cosine >= -1, BM25 >= 0.
SCORE_FLOORS = {"dense": -1.0, "sparse": 0.0}
MAX_QUERY_TERMS = 64  # a huge query is cut to its first terms (noted), not rejected


@dataclass(slots=True)
class _Candidate:
    key: int
    score: float
    scores: dict[str, float]


def retrieve(engine: Engine, params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
    started = time.perf_counter()
    query = text_of(params.query)
    if not query.strip():
        raise RCPError.invalid_params("query", "the query has no text")
    mode = params.mode or "hybrid"
    where, arguments = _filter(engine, params)
    candidate_k = params.candidate_k or max(params.k, engine.config.default_candidate_k)
    ctx.progress(0.05, "recall", f"{mode} recall of {candidate_k}")
    arms: dict[str, list[tuple[int, float]]] = {}
    if mode in ("dense", "hybrid"):
        arms["dense"] = _dense(engine, query, candidate_k, where, arguments, ctx)
    if mode in ("sparse", "hybrid"):
        arms["sparse"] = _lexical(engine, query, candidate_k, where, arguments, ctx)
    ctx.check_cancelled()
    candidates = _combine(arms, params)
    ctx.progress(0.7, "fuse", f"{len(candidates)} candidates")
    if params.min_score is not None:
        candidates = [c for c in candidates if c.score >= params.min_score]
    rows = engine.store.fetch([c.key for c in candidates[: max(params.k * 4, params.k)]])
    candidates = [c for c in candidates if c.key in rows]  # a concurrent delete may race us
    hits = _pack(engine, candidates, rows, params)
    ctx.progress(1.0, "pack", f"{len(hits)} hits")
    usage = m.Usage(
        candidates=len({key for ranked in arms.values() for key, _ in ranked}),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        notes=ctx.notes or None,
    )
    return m.RetrieveResult(hits=hits, usage=usage, index_version=str(engine.store.version))


def _filter(engine: Engine, params: m.RetrieveParams) -> tuple[str | None, list[object]]:
    if params.filter is None:
        return None, []
    fields = engine.config.filter_fields
    tree = parse_filter(params.filter, fields, OPERATORS, path="filter")  # type: ignore[arg-type]
    where, arguments = compile_sqlite(tree, column="filter_meta")
    return where, list(arguments)


def _dense(
    engine: Engine,
    query: str,
    k: int,
    where: str | None,
    arguments: Sequence[object],
    ctx: RequestContext,
) -> list[tuple[int, float]]:
    embedder = engine.embedder(ctx.check_cancelled)
    vector = embedder.embed([query], "query")[0]
    allowed = engine.store.filtered_keys(where, arguments) if where else None
    ctx.check_cancelled()
    return engine.dense.search(vector, k, allowed)


def _lexical(
    engine: Engine,
    query: str,
    k: int,
    where: str | None,
    arguments: Sequence[object],
    ctx: RequestContext,
) -> list[tuple[int, float]]:
    terms = analyze(query)
    if len(terms) > MAX_QUERY_TERMS:
        ctx.notes.append(f"query cut to its first {MAX_QUERY_TERMS} terms for lexical recall")
        terms = terms[:MAX_QUERY_TERMS]
    match = fts_query(terms)
    if match is None:
        return []
    return engine.store.lexical(match, k, where, arguments)


def _combine(
    arms: dict[str, list[tuple[int, float]]], params: m.RetrieveParams
) -> list[_Candidate]:
    per_arm = {arm: dict(ranked) for arm, ranked in arms.items()}
    if len(arms) == 1:
        ((arm, ranked),) = arms.items()
        return [_Candidate(key, score, {arm: score}) for key, score in ranked]
    fusion = params.fusion or m.Fusion()
    method = fusion.method or "rrf"
    options = FusionOptions(
        rrf_k=fusion.rrf_k or 60,
        alpha=0.5 if fusion.alpha is None else fusion.alpha,
        floors=SCORE_FLOORS,
    )
    fused = fuse(method, arms, fusion.weights, options)
    return [
        _Candidate(
            item.key,
            item.score,
            {arm: per_arm[arm][item.key] for arm in arms if item.key in per_arm[arm]}
            | {"fused": item.score},
        )
        for item in fused
    ]


def _pack(
    engine: Engine,
    candidates: list[_Candidate],
    rows: dict[int, ChunkRow],
    params: m.RetrieveParams,
) -> list[Hit]:
    if params.unit == "document":
        candidates = _best_per_document(candidates, rows)
    chosen = candidates[: params.k]
    vectors = engine.dense.vectors_of([c.key for c in chosen]) if params.include_vectors else {}
    return [_hit(rows[c.key], c, params, vectors.get(c.key)) for c in chosen]


def _best_per_document(candidates: list[_Candidate], rows: dict[int, ChunkRow]) -> list[_Candidate]:
    seen: set[str] = set()
    best = []
    for candidate in candidates:
        doc_id = rows[candidate.key].doc_id
        if doc_id not in seen:
            seen.add(doc_id)
            best.append(candidate)
    return best


def _hit(
    row: ChunkRow, candidate: _Candidate, params: m.RetrieveParams, vector: np.ndarray | None
) -> Hit:
    document_unit = params.unit == "document"
    encoded: list[float] | str | None = None
    if vector is not None:
        encoded = encode_f32_base64(vector) if params.encoding == "f32-base64" else vector.tolist()
    return Hit(
        id=row.doc_id if document_unit else row.chunk_id,
        score=candidate.score,
        text=None if params.include_text is False else row.text,
        modality="code" if row.modality == "code" else "text",
        unit="document" if document_unit else "chunk",
        meta=row.meta or None,
        vector=encoded,
        scores=candidate.scores,
        citation=Citation(
            source=row.source,
            uri=row.uri,
            title=row.title,
            start=row.start,
            end=row.end,
            page=row.page,
        ),
        chunk=Chunk(doc_id=row.doc_id, index=row.index, context=row.context),
        # §15.2: nothing ingested here is vouched for; never "trusted" by default.
        trust=Trust(level="untrusted"),
    )
