"""Edge weightings: strategies from raw co-occurrence counts to walk weights, by name.

`raw = sentences + chunk_weight · chunks` — a shared sentence is strong evidence
of a relation, a shared chunk weak evidence. PMI is computed at chunk level:
`log(chunks_ij · N / (df_i · df_j))`, N the number of chunks, df the chunks
that mention each entity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["EDGE_WEIGHTINGS", "CooccurrenceArrays", "edge_weights"]

FloatArray = npt.NDArray[np.float64]

# LMI keeps edges that co-occur no more often than chance, but at a twentieth
# of their count, so a small corpus (or one chunk) still has a connected graph.
_PMI_FLOOR: Final = 0.05


@dataclass(frozen=True, slots=True)
class CooccurrenceArrays:
    """One row per undirected edge, plus the corpus size."""

    sentences: npt.NDArray[np.int64]
    chunks: npt.NDArray[np.int64]
    df_src: npt.NDArray[np.int64]
    df_dst: npt.NDArray[np.int64]
    n_chunks: int


def _raw(counts: CooccurrenceArrays, chunk_weight: float) -> FloatArray:
    return counts.sentences.astype(np.float64) + chunk_weight * counts.chunks


def _pmi(counts: CooccurrenceArrays) -> FloatArray:
    joint = np.maximum(counts.chunks, 1).astype(np.float64) * max(counts.n_chunks, 1)
    marginal = np.maximum(counts.df_src, 1).astype(np.float64) * np.maximum(counts.df_dst, 1)
    result: FloatArray = np.log(joint / marginal)
    return result


def count_weight(counts: CooccurrenceArrays, chunk_weight: float) -> FloatArray:
    """Plain evidence count: frequent pairs (including hub pairs) weigh most."""
    return _raw(counts, chunk_weight)


def ppmi_weight(counts: CooccurrenceArrays, chunk_weight: float) -> FloatArray:
    """Positive PMI alone: specificity, blind to how often (rare pairs can dominate)."""
    return np.maximum(_pmi(counts), 0.0) * (_raw(counts, chunk_weight) > 0)


def lmi_weight(counts: CooccurrenceArrays, chunk_weight: float) -> FloatArray:
    """Local mutual information `raw · max(PMI, floor)`: frequent *and* specific pairs win."""
    return _raw(counts, chunk_weight) * np.maximum(_pmi(counts), _PMI_FLOOR)


Weighting = Callable[[CooccurrenceArrays, float], FloatArray]

#: Edge weightings by name; `GraphConfig.weighting` picks one.
EDGE_WEIGHTINGS: Final[dict[str, Weighting]] = {
    "count": count_weight,
    "ppmi": ppmi_weight,
    "lmi": lmi_weight,
}


def edge_weights(name: str, counts: CooccurrenceArrays, chunk_weight: float) -> FloatArray:
    """Weights by the named strategy; ValueError for an unknown name."""
    try:
        weighting = EDGE_WEIGHTINGS[name]
    except KeyError:
        raise ValueError(
            f"unknown edge weighting {name!r}; known: {sorted(EDGE_WEIGHTINGS)}"
        ) from None
    return weighting(counts, chunk_weight)
