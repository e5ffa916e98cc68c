"""Dense recall paths: exact for small or selective searches, HNSW (usearch) otherwise."""

from __future__ import annotations

import sys
import threading

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


# A GIL-thrashing race (switch interval 1 µs): about 12 s alone, several times that when
# other threads of the suite's process (ANN builders, servers) compete for the GIL.
@pytest.mark.timeout(300)
def test_searches_under_concurrent_upserts_read_one_consistent_index() -> None:
    # Issue 13: search read _keys, _removed and _tenant one by one while update/drop
    # replaced them (numpy lets go of the GIL on arrays this large), so a reader could
    # mix two generations: IndexError or a shape error (-32603), or another tenant's key.
    size = 20_000
    rows = unit_rows(size, 8, seed=3)
    keys = np.arange(1, size + 1, dtype=np.int64)
    index = DenseIndex(8)
    parity_tenants = ["even" if key % 2 == 0 else "odd" for key in keys.tolist()]
    index.replace(keys, rows, np.ones(size, np.int64), np.zeros(size, np.int64), parity_tenants)
    stop = threading.Event()
    failures: list[BaseException] = []
    leaks: list[int] = []

    def write() -> None:
        try:
            for version in range(2, 402):
                key = size + version
                tenant = "even" if key % 2 == 0 else "odd"
                # an upsert (the new row in, the old one retired), then GC drops the old one
                index.update([(key, rows[key % size])], [key - size], version, tenant)
                index.drop([key - size])
        except BaseException as error:
            failures.append(error)
        finally:
            stop.set()

    def read(tenant: str, parity: int) -> None:
        try:
            while not stop.is_set():
                found = index.search(rows[parity], 5, tenant=tenant)
                found += index.search(rows[parity], 5, keys[::3], version=1, tenant=tenant)
                leaks.extend(key for key, _ in found if key % 2 != parity)
                index.vectors_of([key for key, _ in found])
        except BaseException as error:
            failures.append(error)
            stop.set()

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # makes the interleavings common
    try:
        threads = [threading.Thread(target=write)] + [
            threading.Thread(target=read, args=pair) for pair in (("even", 0), ("odd", 1))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(thread.is_alive() for thread in threads)
    finally:
        sys.setswitchinterval(previous)
    assert failures == []
    assert leaks == []
