"""Dense recall paths: exact for small or selective searches, HNSW (usearch) otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from rcpkit.engine.store.dense import DenseIndex, DensePolicy


def unit_rows(count: int, dimension: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, dimension)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def exact(keys: np.ndarray, matrix: np.ndarray, query: np.ndarray, k: int) -> set[int]:
    return set(keys[np.argsort(-(matrix @ query))[:k]].tolist())


def loaded(policy: DensePolicy) -> tuple[DenseIndex, np.ndarray, np.ndarray]:
    keys = np.arange(1, 3001, dtype=np.int64)
    matrix = unit_rows(3000, 32, seed=1)
    index = DenseIndex(32, policy)
    zeros = np.zeros(3000, dtype=np.int64)
    index.replace(keys, matrix, np.ones(3000, dtype=np.int64), zeros, [""] * 3000)
    return index, keys, matrix


def test_the_ann_path_keeps_high_recall_and_respects_the_filter() -> None:
    index, keys, matrix = loaded(DensePolicy(ann_min_size=1000, ann_min_selectivity=0.2))
    assert index.wait_for_ann(60)  # built off the request path
    queries = unit_rows(20, 32, seed=2)
    recalls = [
        len({key for key, _ in index.search(q, 10)} & exact(keys, matrix, q, 10)) / 10
        for q in queries
    ]
    assert np.mean(recalls) >= 0.95
    allowed = keys[::2]
    for q in queries:
        found = [key for key, _ in index.search(q, 10, allowed)]
        assert set(found) <= set(allowed.tolist())
        assert len(found) == 10


def test_a_selective_filter_takes_the_exact_path_and_loses_nothing() -> None:
    index, keys, matrix = loaded(DensePolicy(ann_min_size=1000, ann_min_selectivity=0.2))
    allowed = keys[:30]  # 1 % of the collection
    for q in unit_rows(10, 32, seed=3):
        found = {key for key, _ in index.search(q, 5, allowed)}
        mask = np.isin(keys, allowed)
        assert found == exact(keys[mask], matrix[mask], q, 5)


def test_a_saved_graph_is_loaded_with_newer_rows_added_and_a_foreign_or_torn_one_rebuilt(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    policy = DensePolicy(ann_min_size=1000, ann_min_selectivity=0.2)
    path = tmp_path / "index.usearch"
    matrix = unit_rows(3100, 32, seed=4)
    zeros = np.zeros(3100, dtype=np.int64)

    def opened(identity: str, count: int) -> DenseIndex:
        index = DenseIndex(32, policy, path, identity)
        rows = np.arange(1, count + 1, dtype=np.int64)
        index.replace(rows, matrix[:count], zeros[:count] + 1, zeros[:count], [""] * count)
        assert index.wait_for_ann(60)
        return index

    first = opened("file-a", 3000)
    assert not first._graph.loaded and path.exists()
    again = opened("file-a", 3100)  # 100 rows committed since the graph was saved
    assert again._graph.loaded
    newest = matrix[3050]
    assert again.search(newest, 1) == [(3051, pytest.approx(1.0, abs=1e-4))]
    assert not opened("file-b", 3000)._graph.loaded  # another store's graph is ignored
    path.write_bytes(path.read_bytes()[:1000])  # torn by a crash
    torn = opened("file-b", 3000)
    assert not torn._graph.loaded
    assert {key for key, _ in torn.search(matrix[7], 10)} & {8}
