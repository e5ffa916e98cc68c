"""Merging the rankings of a transform's queries: the engine's RRF, or round-robin."""

from __future__ import annotations

from rcpkit.engine.transform import merge_rankings
from rcpkit.protocol.fusion import FusionOptions, fuse

RANKINGS = [
    [(1, 9.0), (2, 8.0), (3, 7.0)],
    [(4, 5.0), (2, 4.0), (5, 3.0)],
]


def test_rrf_merging_is_the_engines_reciprocal_rank_fusion_with_k_60() -> None:
    expected = fuse("rrf", {"a": RANKINGS[0], "b": RANKINGS[1]}, options=FusionOptions(rrf_k=60))
    assert merge_rankings("rrf", RANKINGS) == [item.key for item in expected]
    assert merge_rankings("rrf", RANKINGS)[0] == 2  # in both lists


def test_rrf_breaks_ties_deterministically() -> None:
    assert merge_rankings("rrf", [[(7, 1.0)], [(3, 1.0)]]) == [3, 7]
    assert merge_rankings("rrf", [[(3, 1.0)], [(7, 1.0)]]) == [3, 7]


def test_interleaving_takes_each_querys_best_hit_in_turn_without_repeats() -> None:
    assert merge_rankings("interleave", RANKINGS) == [1, 4, 2, 3, 5]


def test_interleaving_handles_lists_of_different_lengths() -> None:
    assert merge_rankings("interleave", [[(1, 1.0)], [(2, 1.0), (3, 1.0)], []]) == [1, 2, 3]


def test_a_single_query_keeps_its_own_ranking() -> None:
    assert merge_rankings("single", RANKINGS[:1]) == [1, 2, 3]
    assert merge_rankings("single", []) == []
