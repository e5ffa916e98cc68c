"""The hybrid rerank of indexed candidates: retrieve's own scoring, over those rows only.

Issue 33 item 3: `rerank` by the engine's hybrid scorer (``HybridReranker``)
re-reads the passages as plain text: one BM25 field (no title weight), the
passages embedded again (about 20 s for 100 on two cores), normalised over
the list. Reranking the default retrieve's own top 100 so lowered Cranfield's
nDCG@10 (dev 0.4016 → 0.3929). Inside `retrieve` the passages are rows of this
index, so they are scored here exactly as recall scored them: BM25 through
the query index (title and body fields, the tenant's statistics at the version
read; `QueryIndex.lexical_of`), the cosine of their stored vectors, fused by
the request's fusion (the default's convex α), and the default's feedback pass
over the same rows, its proximity shares and its neighbour smoothing (among
the rows given). Nothing is embedded but the query, which recall already did.
A version the mirror no longer holds falls back to the text scorer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rcpkit.engine.engine import Engine
from rcpkit.engine.index import Index, Keys
from rcpkit.engine.query import Query
from rcpkit.engine.rerank import HybridReranker
from rcpkit.engine.rerank._interfaces import Checkpoint
from rcpkit.engine.retrieve import prf, proximity, smoothing
from rcpkit.engine.retrieve.cursors import resolve_version
from rcpkit.engine.retrieve.recall import Arms, combine, cut_terms
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.scoring.proximity import blend
from rcpkit.engine.scoring.smoothing import smoothed_head
from rcpkit.engine.store.snapshot import snapshot
from rcpkit.engine.text.analysis import analyze, analyze_code_many, analyze_query

__all__ = ["rerank_passages", "rescore_indexed"]

_LOOKUP_ROWS = 64  # a passage whose rarest word is in more rows is not looked up


def rescore_indexed(
    engine: Engine,
    query: Query,
    text: str,
    head: Sequence[Candidate],
    query_vector: npt.NDArray[np.float32],
    version: int,
    tenant: str | None,
) -> list[float] | None:
    """One score per candidate of ``head``, higher better; None: not all are rows here."""
    keys = [candidate.key for candidate in head]
    vectors = engine.dense.vectors_of(keys)
    own = cut_terms(analyze_query(text))  # as recall reads them
    lexical = engine.store.index.lexical_of(own, keys, version, tenant)
    if lexical is None or len(vectors) < len(set(keys)):
        return None
    dense = {key: float(vectors[key] @ query_vector) for key in keys}
    ranking = _fused(query, dense, lexical)
    if prf.applies(engine, query):
        feedback = prf.feedback_terms(engine, text, ranking)
        if feedback is not None:
            expanded = engine.store.index.lexical_of(feedback[1], keys, version, tenant)
            ranking = _fused(query, dense, expanded) if expanded is not None else ranking
    scores = {candidate.key: candidate.score for candidate in ranking}
    if proximity.applies(engine, query):
        # The stage's shares go to the best DEPTH by fused score, as in `retrieve`.
        best = sorted(scores, key=lambda key: (-scores[key], key))[: proximity.DEPTH]
        near = proximity.shares(engine, text, best, version, tenant)
        if near is not None:
            weight = engine.config.proximity_weight
            scores = {k: blend(v, near.get(k, 0.0), weight) for k, v in scores.items()}
    if smoothing.applies(engine, query):
        # The best DEPTH by score, smoothed among themselves as `retrieve` smooths its own.
        scores = smoothed_head(scores, vectors, engine.config.smoothing_weight)
    return [scores.get(key, 0.0) for key in keys]


def rerank_passages(
    engine: Engine,
    reranker: HybridReranker,
    query: str,
    passages: Sequence[str],
    tenant: str | None,
    checkpoint: Checkpoint | None = None,
) -> list[float]:
    """§7.6 `rerank` by the hybrid scorer: as `retrieve` scores, when every passage is a row.

    A client reranking this engine's own hits sends their texts back; each is found
    among the rows holding its rarest word (the text equal to the passage; the
    smallest key of copies), and the list is scored by `rescore_indexed` with the
    default retrieve's pipeline at the latest version. A list with any passage that
    is not a row here (another engine's, an edited one) is scored as text.
    """
    with snapshot(engine.store):  # §7.7.1: the lookup and the scores read one version
        version = resolve_version(engine.store, None, tenant).version
        keys = _keys_of(engine, passages, version, tenant) if passages else None
        if keys is not None:
            vector = engine.embedder(checkpoint).embed([query], "query")[0]
            head = [Candidate(key, 0.0) for key in keys]
            scores = rescore_indexed(engine, Query(query), query, head, vector, version, tenant)
            if scores is not None:
                return scores
    return [float(v) for v in reranker.score(query, passages, checkpoint, tenant=tenant)]


def _keys_of(
    engine: Engine, passages: Sequence[str], version: int, tenant: str | None
) -> list[int] | None:
    index = engine.store.index
    held = [_rows_holding(index, passage, version, tenant) for passage in passages]
    if any(len(keys) == 0 or len(keys) > _LOOKUP_ROWS for keys in held):
        return None
    rows = engine.store.fetch(sorted({int(key) for keys in held for key in keys}))
    found = []
    for passage, keys in zip(passages, held, strict=True):
        same = sorted(
            int(key) for key in keys if int(key) in rows and rows[int(key)].text == passage
        )
        if not same:
            return None
        found.append(same[0])
    return found


def _rows_holding(index: Index, passage: str, version: int, tenant: str | None) -> Keys:
    """The rows holding ``passage``'s rarest word, analysed as a prose row, else as code.

    A code row holds its identifiers split (``parsefilt``, ``pars``, ``filter``);
    prose analysis keeps ``parse_filter`` whole, a word no code row holds.
    """
    held = index.rows_holding(analyze(passage), version, tenant)
    if len(held) == 0:
        held = index.rows_holding(analyze_code_many([passage])[0], version, tenant)
    return held


def _fused(query: Query, dense: dict[int, float], lexical: dict[int, float]) -> list[Candidate]:
    """The two arms over the same rows, fused as recall fuses them (a row BM25 misses is out)."""
    mode = query.effective_mode
    arms: Arms = {}
    if mode != "sparse":
        arms["dense"] = _ranked(dense)
    if mode != "dense":
        arms["sparse"] = [(key, score) for key, score in _ranked(lexical) if score > 0]
    return combine(arms, query)


def _ranked(scores: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
