"""Combining the rankings of a transform's queries, by the strategy the transform names.

`rrf` is the engine's own reciprocal-rank fusion (`rcpkit.protocol.fusion.fuse`,
k = 60, deterministic ties), one arm per query. `interleave` is round-robin
merging, as in metasearch: a decomposed question needs every part's best hits,
and RRF would instead promote whatever all parts half-match.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

from rcpkit.engine.transform._types import Merge
from rcpkit.protocol.fusion import RRF_K, FusionOptions, Ranked, fuse

__all__ = ["MERGES", "merge_rankings"]

MergeFunction = Callable[[Sequence[Ranked], int], list[int]]


def _single(rankings: Sequence[Ranked], rrf_k: int) -> list[int]:
    return [key for key, _ in rankings[0]] if rankings else []


def _rrf(rankings: Sequence[Ranked], rrf_k: int) -> list[int]:
    arms = {f"query:{i}": ranked for i, ranked in enumerate(rankings)}
    return [item.key for item in fuse("rrf", arms, options=FusionOptions(rrf_k=rrf_k))]


def _interleave(rankings: Sequence[Ranked], rrf_k: int) -> list[int]:
    merged: dict[int, None] = {}
    for group in itertools.zip_longest(*rankings):
        for entry in group:
            if entry is not None:
                merged.setdefault(entry[0], None)
    return list(merged)


MERGES: Mapping[Merge, MergeFunction] = {
    "single": _single,
    "rrf": _rrf,
    "interleave": _interleave,
}


def merge_rankings(merge: Merge, rankings: Sequence[Ranked], rrf_k: int = RRF_K) -> list[int]:
    """One ranking of candidate keys from one ranking per query (in `queries` order)."""
    return MERGES[merge](rankings, rrf_k)
