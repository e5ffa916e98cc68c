"""The engine's own hybrid scorer as a reranker: BM25 with the index's statistics + cosine.

Issue 33: a client that sends `rerank` (§7.6) gets scores from the same two
arms `retrieve` fuses, over the passages it sends: BM25 with this index's
parameters (k1, b) and corpus statistics (``N``, ``avgdl``, each query token's
``n`` over the rows the tenant sees; `QueryIndex.lexical_statistics`), and the
cosine of the embedder's query and passage vectors, fused by §16.3's convex
combination with the pipeline's α and the arms' score floors (cosine ≥ -1,
BM25 ≥ 0), each arm normalised by its observed maximum over the passages
given. So reranking the engine's own candidates keeps its first-stage order
up to the normalisation's upper end; reranking someone else's list ranks it
as the engine would. A store without corpus statistics (PostgreSQL today)
falls back to the statistics of the passages themselves.

The default retrieve's feedback pass is repeated over the passages: RM3
(``rcpkit.engine.scoring.rm3``) over the first fused ranking's top ``feedback``
passages expands the query of a second BM25 over the same passages, fused again
(skipped, as in the pipeline, when those passages average fewer analysed terms
than ``min_feedback_terms``), and so are its proximity stage and its neighbour
smoothing (the best passages among themselves, by their embeddings). A
passage is one field (a rerank passage has no title): a hit counts the body
weight, 1. Scores are ``[0, 1]``, ``scores[i]``
for ``passages[i]``, and only compare within one call (§4.6).

Inside `retrieve` the candidates are rows of the index, and its rerank stage
scores them with the index's own fields and stored vectors instead
(``rcpkit.engine.retrieve.rescore``), as the §7.6 `rerank` method does when
every passage it is given is a row's text; this text scorer answers the rest.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from rcpkit.engine.models import Embedder
from rcpkit.engine.query import DEFAULT_ALPHA
from rcpkit.engine.rerank._interfaces import Checkpoint, RerankMethod, Scores
from rcpkit.engine.scoring.bm25 import BM25, DEFAULT_BM25, query_weights, tokens
from rcpkit.engine.scoring.proximity import (
    blend,
    pair_shares,
    pair_tokens,
    positions_of,
    query_pairs,
)
from rcpkit.engine.scoring.rm3 import expansion_terms
from rcpkit.engine.scoring.smoothing import smoothed_head
from rcpkit.engine.text.analysis import analyze_code_many, analyze_query
from rcpkit.protocol.fusion import FusionOptions, fuse

__all__ = ["HybridReranker", "LexicalStatistics"]

_FLOORS = {"dense": -1.0, "sparse": 0.0}  # §6.1 scoreFloor per arm, as recall's
_CEILINGS = {"dense": 1.0}  # cosine's, as recall's: no passage holds a query word


@runtime_checkable
class LexicalStatistics(Protocol):
    """A store that can say what its BM25 reads: ``N``, ``avgdl`` and ``n`` per token."""

    bm25: BM25

    def lexical_statistics(
        self, tokens: Sequence[str], version: int | None = None, tenant: str | None = None
    ) -> tuple[int, float, dict[str, int]]: ...


class HybridReranker:
    """`rerank` by the engine's hybrid scorer (advertised as §7.6 `cross-encoder`).

    §6.1 lists the methods a server may advertise (``cross-encoder``, ``colbert``,
    ``llm``); this is a pointwise (query, passage) scorer, advertised under
    ``cross-encoder`` with its own model identity, and only when no ONNX or
    sentence-transformers cross-encoder is configured (that one then owns the name).
    """

    def __init__(
        self,
        embedder: Embedder,
        store: object,
        alpha: float = DEFAULT_ALPHA,
        *,
        feedback: int = 10,
        feedback_terms: int = 10,
        min_feedback_terms: float = 0.0,
        proximity_weight: float = 0.0,
        smoothing_weight: float = 0.0,
    ) -> None:
        self._embedder = embedder
        self._store = store if isinstance(store, LexicalStatistics) else None
        self._bm25 = self._store.bm25 if self._store is not None else DEFAULT_BM25
        self._alpha = alpha
        self._feedback = feedback  # 0 or 1: no feedback pass
        self._feedback_terms = feedback_terms
        self._min_feedback_terms = min_feedback_terms
        self._proximity_weight = proximity_weight
        self._smoothing_weight = smoothing_weight

    @property
    def method(self) -> RerankMethod:
        return "cross-encoder"

    @property
    def identity(self) -> str:
        b = self._bm25
        near = f"; proximity {self._proximity_weight:g}" if self._proximity_weight else ""
        alike = f"; smoothing {self._smoothing_weight:g}" if self._smoothing_weight else ""
        return (
            f"rcpkit-hybrid/1 ({self._embedder.identity}; BM25 k1 {b.k1:g} b {b.b:g}; "
            f"convex alpha {self._alpha:g}{near}{alike})"
        )

    def score(
        self,
        query: str,
        passages: Sequence[str],
        checkpoint: Checkpoint | None = None,
        *,
        tenant: str | None = None,
    ) -> Scores:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        analysed = analyze_code_many(list(passages))  # every passage's identifiers split
        rows = [tokens(" ".join(terms)) for terms in analysed]
        own = analyze_query(query)
        lexical = self._lexical(query_weights(own), rows, tenant)
        if checkpoint is not None:
            checkpoint()
        query_vector = self._embedder.embed([query], "query")[0]
        vectors = self._embedder.embed(list(passages), "document")
        dense = vectors @ query_vector
        fused = self._fused(dense, lexical)
        if self._feedback >= 2 and len(passages) >= 2:
            head = sorted(range(len(passages)), key=lambda i: (-fused[i], i))[: self._feedback]
            terms = [analysed[i] for i in head]  # as the rows were analysed (prf's way)
            if np.mean([len(t) for t in terms]) >= self._min_feedback_terms:
                expanded = own + expansion_terms(own, terms, self._feedback_terms)
                lexical = self._lexical(query_weights(expanded), rows, tenant)
                fused = self._fused(dense, lexical)
        if self._proximity_weight > 0:
            fused = self._near(query, rows, fused, tenant)
        if self._smoothing_weight > 0:  # the smoothing stage (rcpkit.engine.scoring.smoothing)
            scores = smoothed_head(
                dict(enumerate(fused)), dict(enumerate(vectors)), self._smoothing_weight
            )
            fused = np.asarray([scores[i] for i in range(len(passages))])
        return fused.astype(np.float32)

    def _near(
        self, query: str, rows: list[list[str]], fused: np.ndarray, tenant: str | None
    ) -> np.ndarray:
        """The proximity stage of the default retrieve (``rcpkit.engine.scoring.proximity``)."""
        pairs = query_pairs(query)
        if not pairs:
            return fused
        documents, _, frequency = self._statistics(pair_tokens(pairs), rows, tenant)
        where = [positions_of(row) for row in rows]
        near = pair_shares(pairs, where, documents, frequency, self._bm25.k1)
        weight = self._proximity_weight
        return np.asarray([blend(f, s, weight) for f, s in zip(fused, near, strict=True)])

    def _statistics(
        self, asked: list[str], rows: list[list[str]], tenant: str | None
    ) -> tuple[int, float, dict[str, int]]:
        """``N``, ``avgdl`` and ``n`` per token: the index's, else the passages' own."""
        documents, average, frequency = (
            self._store.lexical_statistics(asked, None, tenant) if self._store else (0, 0.0, {})
        )
        if documents == 0:  # no statistics (or an empty index)
            average = float(np.mean([len(row) for row in rows])) or 1.0
            frequency = {t: sum(t in set(row) for row in rows) for t in asked}
            return len(rows), average, frequency
        return documents, average, frequency

    def _fused(self, dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
        arms = {
            "dense": _ranked(dense),
            "sparse": [(i, v) for i, v in _ranked(lexical) if v > 0],
        }
        options = FusionOptions(alpha=self._alpha, floors=_FLOORS, ceilings=_CEILINGS)
        fused = {item.key: item.score for item in fuse("convex", arms, None, options)}
        return np.asarray([fused.get(i, 0.0) for i in range(len(dense))], dtype=np.float64)

    def _lexical(
        self, asked: dict[str, float], rows: list[list[str]], tenant: str | None
    ) -> np.ndarray:
        """BM25 of each row for the query's tokens, each weighted as the index weighs it."""
        lengths = np.asarray([len(row) for row in rows], dtype=np.float64)
        documents, average, frequency = self._statistics(list(asked), rows, tenant)
        k1, b, weight = self._bm25.k1, self._bm25.b, self._bm25.body_weight
        scores = np.zeros(len(rows), dtype=np.float64)
        for i, row in enumerate(rows):
            counts = Counter(row)
            norm = k1 * (1.0 - b + b * lengths[i] / (average or 1.0))
            for token, times in asked.items():
                hits = counts.get(token, 0)
                n = max(frequency.get(token, 0), 1 if hits else 0)
                if hits == 0:
                    continue
                idf = math.log((documents - n + 0.5) / (n + 0.5))
                f = weight * hits
                scores[i] += times * (idf if idf > 0 else 1e-6) * f * (k1 + 1.0) / (f + norm)
        return scores


def _ranked(values: np.ndarray) -> list[tuple[int, float]]:
    order = sorted(range(len(values)), key=lambda i: (-float(values[i]), i))
    return [(i, float(values[i])) for i in order]
