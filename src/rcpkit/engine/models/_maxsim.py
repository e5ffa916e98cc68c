"""Late-interaction (ColBERT-style) MaxSim scoring over token matrices (§7.5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._interfaces import Vectors

__all__ = ["maxsim", "maxsim_many"]


def maxsim(query_tokens: Vectors, document_tokens: Vectors) -> float:
    """§7.5 MaxSim: Σ over query tokens of the best dot product with any document token.

    With unit-length token vectors the dot product is the cosine. An empty
    query or document scores 0.0.
    """
    return float(maxsim_many(query_tokens, [document_tokens])[0])


def maxsim_many(query_tokens: Vectors, documents: Sequence[Vectors]) -> npt.NDArray[np.float32]:
    """MaxSim of one query against many documents, with a single matrix product."""
    scores = np.zeros(len(documents), dtype=np.float32)
    query = np.asarray(query_tokens, dtype=np.float32)
    lengths = np.array([len(document) for document in documents], dtype=np.intp)
    present = np.flatnonzero(lengths)
    if query.shape[0] == 0 or present.size == 0:
        return scores
    stacked = np.concatenate([np.asarray(documents[i], dtype=np.float32) for i in present.tolist()])
    if stacked.ndim != 2 or query.ndim != 2 or stacked.shape[1] != query.shape[1]:
        raise ValueError(f"token dimensions differ: query {query.shape}, documents {stacked.shape}")
    similarities = query @ stacked.T  # (query tokens, all document tokens)
    # reduceat needs non-empty segments, hence the `present` filter above.
    starts = np.concatenate(([0], np.cumsum(lengths[present])[:-1]))
    best = np.maximum.reduceat(similarities, starts, axis=1)  # (query tokens, documents)
    scores[present] = best.sum(axis=0)
    return scores
