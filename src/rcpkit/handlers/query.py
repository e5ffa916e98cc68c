"""§7.7 ``RetrieveParams`` → the engine's :class:`~rcpkit.engine.query.Query`, once.

:func:`run_retrieve` is the one retrieve entry point: the RCP handler
(``rcpkit.handlers.engine``) and the in-process API (``rcpkit.open(...).search``)
both call it with typed, gated params, so they answer with the same hits.

The filter is the runtime's: parsed and checked against the advertised fields,
operators and array fields before any handler runs (§8, ``ctx.filter``), so
the engine never parses the wire filter again.
"""

from __future__ import annotations

from dataclasses import replace

from rcpkit.engine.engine import Engine
from rcpkit.engine.query import Fusion, Query, Recency, Rerank
from rcpkit.engine.request import EngineRequest
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import text_of
from rcpkit.protocol.filters import Filter

__all__ = ["query_of", "run_retrieve"]


def run_retrieve(
    engine: Engine,
    params: m.RetrieveParams,
    tree: Filter | None,
    request: EngineRequest,
    vector: tuple[float, ...] | None = None,
) -> m.RetrieveResult:
    """``params`` (validated and gated, §7.7, §12) run by the engine's pipeline.

    ``tree`` is the §8 filter as the runtime parsed and checked it; ``vector`` the
    query's own unit vector for the dense arm (in process, or the wire's `vector`
    extension, checked by the handler).
    """
    return retrieve(engine, replace(query_of(params, tree), vector=vector), request)


def query_of(params: m.RetrieveParams, tree: Filter | None) -> Query:
    """The engine's query for ``params``; ``tree`` is ``ctx.filter``."""
    return Query(
        text=text_of(params.query),
        k=params.k,
        mode=params.mode,
        candidate_k=params.candidate_k,
        fusion=_fusion(params.fusion),
        rerank=(
            Rerank(params.rerank.method, params.rerank.top_n)
            if isinstance(params.rerank, m.RerankOption)
            else None
        ),
        mmr_lambda=params.mmr.lambda_ if params.mmr is not None else None,
        rewrite=params.rewrite if isinstance(params.rewrite, str) else None,
        filter=tree,
        min_score=params.min_score,
        recency=(
            Recency(params.recency.field, params.recency.half_life_days)
            if params.recency is not None
            else None
        ),
        unit=params.unit or "chunk",
        level=params.level,
        token_budget=params.token_budget,
        session_id=params.session_id,
        include_text=params.include_text is not False,
        include_vectors=params.include_vectors is True,
        encoding=params.encoding or "json",
        seed=params.seed,
        strict=params.strict is not False,
        index_version=params.index_version,
        cursor=params.cursor,
    )


def _fusion(fusion: m.Fusion | None) -> Fusion | None:
    """A spelled-out ``fusion`` with §16.3's defaults for what it omits (RRF, α 0.5)."""
    if fusion is None:
        return None
    spec = Fusion()
    return Fusion(
        method=fusion.method or spec.method,
        rrf_k=fusion.rrf_k or spec.rrf_k,
        alpha=spec.alpha if fusion.alpha is None else fusion.alpha,
        weights=dict(sorted(fusion.weights.items())) if fusion.weights else None,
    )
