"""Neighbour smoothing: each of the best candidates moves towards the scores of those most like it.

Score regularisation (Diaz 2005) on the cluster hypothesis (van Rijsbergen
1979): documents alike in content tend to be relevant to the same requests, so
a candidate whose nearest fellow candidates score high is more likely relevant
than its own score says, and a lone high scorer among low-scoring neighbours
less. Over the best ``DEPTH`` candidates of a ranking, each gets

    ``(1 - w) · s + w · Σ_n c_n · s_n / Σ_n c_n``

over its ``NEIGHBOURS`` nearest fellow candidates ``n`` by the cosine ``c_n``
of their stored vectors (negative cosines count 0; a candidate with no
positive neighbour keeps ``s``), except that the best candidate is never
lowered: the one with the strongest evidence of its own keeps its place, as a
known-item query needs (its one answer has look-alikes that score less). The
new scores lie between the head's lowest and highest, so the head stays above
every candidate past it.

Shared by the default retrieve's smoothing stage
(``rcpkit.engine.retrieve.smoothing``), the rerank of indexed candidates
(``rcpkit.engine.retrieve.rescore``) and the text rerank
(``rcpkit.engine.rerank._hybrid``). Measured in ``benchmarks/quality_lab.py``
over the seven collections of docs/quality.md: BENCHMARKS.md, "neighbour
smoothing".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["DEPTH", "NEIGHBOURS", "smooth", "smoothed_head"]

DEPTH = 75  # the best candidates smoothed, each among the others
NEIGHBOURS = 8  # the nearest fellow candidates a score moves towards


def smooth(
    scores: Sequence[float],
    vectors: npt.NDArray[np.float32],
    weight: float,
    neighbours: int = NEIGHBOURS,
) -> npt.NDArray[np.float64]:
    """``scores`` (one per row of ``vectors``, unit rows) each mixed with its neighbours'."""
    values = np.asarray(scores, dtype=np.float64)
    if weight <= 0 or len(values) < 2:
        return values
    block = np.asarray(vectors, dtype=np.float32)
    similar = block @ block.T  # float32 cosines: ample as weights, half the cost
    np.fill_diagonal(similar, -np.inf)  # a candidate is not its own neighbour
    near = np.argsort(-similar, axis=1, kind="stable")[:, : min(neighbours, len(values) - 1)]
    cosines = np.clip(np.take_along_axis(similar, near, axis=1), 0.0, None).astype(np.float64)
    held = cosines.sum(axis=1)
    mean = (cosines * values[near]).sum(axis=1) / np.maximum(held, 1e-12)
    moved = (1.0 - weight) * values + weight * np.where(held > 0, mean, values)
    best = int(np.argmax(values))  # the first of the best, as the head is ordered
    moved[best] = max(moved[best], values[best])  # never lowered: it stays first
    return moved


def smoothed_head(
    scores: Mapping[int, float],
    vectors: Mapping[int, npt.NDArray[np.float32]],
    weight: float,
) -> dict[int, float]:
    """``scores`` with the best ``DEPTH`` that have a vector smoothed among themselves.

    The head is the best by score, ties by key (as the pipeline orders them);
    a key without a stored vector keeps its score and is nobody's neighbour.
    """
    ranked = sorted(scores, key=lambda key: (-scores[key], key))
    head = [key for key in ranked[:DEPTH] if key in vectors]
    out = dict(scores)
    if weight <= 0 or len(head) < 2:
        return out
    matrix = np.stack([vectors[key] for key in head])
    moved = smooth([scores[key] for key in head], matrix, weight)
    out.update(zip(head, (float(value) for value in moved), strict=True))
    return out
