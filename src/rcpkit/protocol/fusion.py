"""Rank fusion strategies (§16.3), looked up by name: rrf, weighted, convex.

The arithmetic alone, shared by the engine (its recall arms, its hybrid
reranker, its query transforms) and by federation (engines as the arms), so
neither imports the other for it. Each takes ranked lists per arm (best
first, with the arm's raw scores) and returns one fused ranking. Ties break
deterministically: higher fused score, then more arms contributing (summed
weight), then smaller id (§16.3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["FUSION", "RRF_K", "Fused", "Ranked", "fuse", "rrf_score"]

Ranked = Sequence[tuple[int, float]]  # (candidate key, raw score), best first


@dataclass(frozen=True, slots=True)
class Fused:
    key: int
    score: float
    weight: float  # summed weight of the arms that returned the candidate


# Reciprocal rank fusion's k (Cormack, Clarke & Büttcher 2009): rank r scores 1 / (k + r).
RRF_K = 60


def rrf_score(rank: int, k: int = RRF_K) -> float:
    """The reciprocal-rank score of a 1-based ``rank``."""
    return 1.0 / (k + rank)


FusionFunction = Callable[
    [Mapping[str, Ranked], Mapping[str, float], "FusionOptions"], dict[int, float]
]


@dataclass(frozen=True, slots=True)
class FusionOptions:
    rrf_k: int = RRF_K
    alpha: float = 0.5  # convex: weight of the dense arm
    floors: Mapping[str, float] | None = None  # convex: each arm's theoretical minimum
    # convex, weighted: an arm's theoretical maximum (cosine 1), read only when that arm
    # is the one list that returned anything (see `_scaled_alone`)
    ceilings: Mapping[str, float] | None = None


def _rrf(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: FusionOptions
) -> dict[int, float]:
    scores: dict[int, float] = {}
    for arm, ranked in lists.items():
        weight = weights.get(arm, 1.0)
        for rank, (key, _score) in enumerate(ranked, 1):
            scores[key] = scores.get(key, 0.0) + weight / (o.rrf_k + rank)
    return scores


def _normalised(
    ranked: Ranked, floor: float | None, ceiling: float | None = None
) -> dict[int, float]:
    if not ranked:
        return {}
    values = [score for _, score in ranked]
    top = max(values) if ceiling is None else max(ceiling, *values)
    low = min(values) if floor is None else min(floor, *values)
    span = top - low
    if span <= 0:
        return {key: 1.0 for key, _ in ranked}
    return {key: (score - low) / span for key, score in ranked}


def _scaled_alone(lists: Mapping[str, Ranked], o: FusionOptions) -> dict[str, float]:
    """The ceiling of the one arm that returned anything, when every other arm is empty.

    Min-max over a list maps its best to 1 however weak it is. Beside another arm's
    evidence that is a fair scale; alone (a hybrid query none of whose words any
    chunk holds) it would show the nearest of unrelated chunks as a perfect hit.
    Scaled by its theoretical maximum instead, its best is only as good as it is
    near (issue 52); the order within the arm is the same either way.
    """
    returned = [arm for arm, ranked in lists.items() if ranked]
    if len(lists) < 2 or len(returned) != 1 or not o.ceilings:
        return {}
    (arm,) = returned
    return {arm: o.ceilings[arm]} if arm in o.ceilings else {}


def _weighted(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: FusionOptions
) -> dict[int, float]:
    # Per-arm min-max over the returned set (§16.3 weighted score fusion).
    scores: dict[int, float] = {}
    ceilings = _scaled_alone(lists, o)
    for arm, ranked in lists.items():
        weight = weights.get(arm, 1.0)
        for key, value in _normalised(ranked, None, ceilings.get(arm)).items():
            scores[key] = scores.get(key, 0.0) + weight * value
    return scores


def _convex(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: FusionOptions
) -> dict[int, float]:
    # §16.3 convex combination: the interval's minimum is each arm's theoretical
    # floor (cosine >= -1, BM25 >= 0), so a uniformly weak arm stays weak
    # (Bruch et al., TOIS 2023). alpha weighs the dense arm.
    floors = o.floors or {}
    mix = {"dense": o.alpha}
    scores: dict[int, float] = {}
    ceilings = _scaled_alone(lists, o)
    others = [arm for arm in lists if arm != "dense"]
    for arm, ranked in lists.items():
        share = mix.get(arm, (1.0 - o.alpha) / max(1, len(others)))
        for key, value in _normalised(ranked, floors.get(arm), ceilings.get(arm)).items():
            scores[key] = scores.get(key, 0.0) + share * value
    return scores


FUSION: dict[str, FusionFunction] = {"rrf": _rrf, "weighted": _weighted, "convex": _convex}


def fuse(
    method: str,
    lists: Mapping[str, Ranked],
    weights: Mapping[str, float] | None = None,
    options: FusionOptions | None = None,
) -> list[Fused]:
    """Fuse per-arm rankings with the named strategy; deterministic order."""
    weights = weights or {}
    scores = FUSION[method](lists, weights, options or FusionOptions())
    contributed: dict[int, float] = {}
    for arm, ranked in lists.items():
        for key, _ in ranked:
            contributed[key] = contributed.get(key, 0.0) + weights.get(arm, 1.0)
    fused = [Fused(key, score, contributed[key]) for key, score in scores.items()]
    fused.sort(key=lambda item: (-item.score, -item.weight, str(item.key)))
    return fused
