from __future__ import annotations

import numpy as np

from rcpkit.engine.graph._communities import canonical
from rcpkit.engine.graph._cooccurrence import chunk_pairs, merge_pairs
from rcpkit.engine.graph._walk import LocalGraph, best_paths, path_to, personalized_pagerank
from rcpkit.engine.graph._weights import EDGE_WEIGHTINGS, CooccurrenceArrays


def _graph(edges: list[tuple[int, int, float]], n: int) -> LocalGraph:
    a = np.array([e[0] for e in edges], dtype=np.int64)
    b = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=np.float64)
    return LocalGraph(
        np.arange(n, dtype=np.int64), np.concatenate([a, b]), np.concatenate([b, a]), np.tile(w, 2)
    )


def test_pairs_count_shared_sentences_and_shared_chunks() -> None:
    counts = chunk_pairs([(1, 0), (2, 0), (3, 1), (1, 1), (1, 0)])
    assert counts == {(1, 2): [1, 1], (1, 3): [1, 1], (2, 3): [0, 1]}


def test_merged_pairs_add_up() -> None:
    merged = merge_pairs([{(1, 2): [1, 1]}, {(1, 2): [0, 1], (2, 3): [2, 1]}])
    assert merged == {(1, 2): [1, 2], (2, 3): [2, 1]}


def test_lmi_favours_specific_pairs_over_hub_pairs_of_equal_count() -> None:
    counts = CooccurrenceArrays(
        sentences=np.array([2, 2]),
        chunks=np.array([2, 2]),
        df_src=np.array([2, 10]),
        df_dst=np.array([2, 10]),
        n_chunks=10,
    )
    lmi = EDGE_WEIGHTINGS["lmi"](counts, 0.25)
    count = EDGE_WEIGHTINGS["count"](counts, 0.25)
    assert lmi[0] > lmi[1] > 0
    assert count[0] == count[1] == 2.5


def test_personalized_pagerank_matches_the_closed_form() -> None:
    graph = _graph([(0, 1, 1.0), (1, 2, 2.0), (2, 3, 1.0), (0, 3, 0.5)], 4)
    restart = np.array([1.0, 0.0, 0.0, 0.0])
    scores = personalized_pagerank(graph, restart, damping=0.85, max_iterations=500, tolerance=0)
    transition = np.zeros((4, 4))
    for s, d, w in zip(graph.src, graph.dst, graph.weight, strict=True):
        transition[d, s] += w
    transition /= transition.sum(axis=0, keepdims=True)
    exact = 0.15 * np.linalg.solve(np.eye(4) - 0.85 * transition, restart)
    assert np.allclose(scores, exact, atol=1e-9)
    assert np.isclose(scores.sum(), 1.0)


def test_dangling_seeds_keep_all_the_mass() -> None:
    graph = _graph([(1, 2, 1.0)], 3)
    scores = personalized_pagerank(graph, np.array([1.0, 0.0, 0.0]))
    assert np.allclose(scores, [1.0, 0.0, 0.0])


def test_best_paths_follow_the_most_probable_steps_within_the_hop_limit() -> None:
    # 0-1-3 is strong, 0-2-3 weak; 3-4 one hop further.
    graph = _graph([(0, 1, 5.0), (1, 3, 5.0), (0, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0)], 5)
    cost, parents = best_paths(graph, np.array([0], dtype=np.int64), hops=2)
    assert path_to(parents, 3) == [0, 1, 3]
    assert np.isinf(cost[4])
    cost, parents = best_paths(graph, np.array([0], dtype=np.int64), hops=3)
    assert path_to(parents, 4) == [0, 1, 3, 4]


def test_canonical_labels_order_communities_by_size_then_first_member() -> None:
    assert canonical(np.array([7, 3, 3, 7, 9, 3], dtype=np.int64)).tolist() == [1, 0, 0, 1, 2, 0]
