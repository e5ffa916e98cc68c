"""Dense recall paths: exact for small or selective searches, HNSW (usearch) otherwise."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

from rcpkit.engine.index.dense import DenseIndex, DensePolicy


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


# ANN allowed whenever it reaches the recall target, however slow (3,000 rows: exact is faster).
ANY_COST = DensePolicy(ann_min_size=1000, ann_max_cost=1e9, ann_calibration_queries=16)


def calibrated(index: DenseIndex, seed: int = 9) -> None:
    """Ask the unfiltered queries the calibration measures on, then wait for it."""
    assert index.wait_for_graph(60)
    for q in unit_rows(16, 32, seed=seed):
        index.search(q, 10)
    index.wait_for_ann(120)


def test_the_ann_path_is_calibrated_to_the_recall_target_and_filters_stay_exact() -> None:
    index, keys, matrix = loaded(ANY_COST)
    assert index.wait_for_graph(60)  # built off the request path...
    assert index._graph.ready is None  # ...but answers nothing before its calibration
    calibrated(index)
    calibration = index.ann_calibration
    assert calibration is not None and calibration.use_ann  # type: ignore[attr-defined]
    assert calibration.recall >= 0.95  # type: ignore[attr-defined]
    assert index.ann_graph.expansion_search == calibration.ef  # type: ignore[attr-defined]
    queries = unit_rows(20, 32, seed=2)  # held out: not the calibration's queries
    recalls = [
        len({key for key, _ in index.search(q, 10)} & exact(keys, matrix, q, 10)) / 10
        for q in queries
    ]
    assert np.mean(recalls) >= 0.9
    allowed = keys[::2]  # a filter keeping 50 %: exact, recall 1.0 (§8)
    mask = np.isin(keys, allowed)
    for q in queries:
        found = {key for key, _ in index.search(q, 10, allowed)}
        assert found == exact(keys[mask], matrix[mask], q, 10)


def test_the_calibration_falls_back_to_exact_when_no_ef_meets_the_target_and_keeps_it(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    # A target no graph reaches: the decision is exact, the graph leaves memory, and a
    # reopened index neither loads nor rebuilds it (the old code always searched the graph).
    policy = DensePolicy(ann_min_size=1000, ann_target_recall=1.01, ann_calibration_queries=16)
    path = tmp_path / "index.usearch"
    keys = np.arange(1, 3001, dtype=np.int64)
    matrix = unit_rows(3000, 32, seed=1)
    zeros = np.zeros(3000, dtype=np.int64)
    index = DenseIndex(32, policy, path, "file-a")
    index.replace(keys, matrix, zeros + 1, zeros, [""] * 3000)
    calibrated(index)
    calibration = index.ann_calibration
    assert calibration is not None and not calibration.use_ann  # type: ignore[attr-defined]
    assert len(calibration.curve) >= 1  # type: ignore[attr-defined]
    assert index.ann_graph is None
    q = unit_rows(1, 32, seed=5)[0]
    assert {key for key, _ in index.search(q, 10)} == exact(keys, matrix, q, 10)
    again = DenseIndex(32, policy, path, "file-a")
    again.replace(keys, matrix, zeros + 1, zeros, [""] * 3000)
    assert again._graph._builder is None  # no build started
    assert again.ann_calibration == calibration


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
    policy = ANY_COST
    path = tmp_path / "index.usearch"
    matrix = unit_rows(3100, 32, seed=4)
    zeros = np.zeros(3100, dtype=np.int64)

    def opened(identity: str, count: int) -> DenseIndex:
        index = DenseIndex(32, policy, path, identity)
        rows = np.arange(1, count + 1, dtype=np.int64)
        index.replace(rows, matrix[:count], zeros[:count] + 1, zeros[:count], [""] * count)
        assert index.wait_for_graph(60)
        return index

    first = opened("file-a", 3000)
    assert not first._graph.loaded and path.exists()
    calibrated(first)
    assert first.ann_calibration.use_ann  # type: ignore[union-attr]
    again = opened("file-a", 3100)  # 100 rows committed since the graph was saved
    assert again._graph.loaded
    assert again.ann_calibration == first.ann_calibration  # saved with the graph
    assert again._graph.ready is not None  # answers at once, no recalibration needed
    newest = matrix[3050]
    assert again.search(newest, 1) == [(3051, pytest.approx(1.0, abs=1e-4))]
    assert not opened("file-b", 3000)._graph.loaded  # another store's graph is ignored
    path.write_bytes(path.read_bytes()[:1000])  # torn by a crash
    torn = opened("file-b", 3000)
    assert not torn._graph.loaded
    assert {key for key, _ in torn.search(matrix[7], 10)} & {8}


def test_a_saved_graph_with_flipped_bytes_is_not_handed_to_usearch_and_is_rebuilt(
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    # Issue 34 (cache campaign): a damaged graph of the saved size was loaded as it was,
    # and usearch crashed the server in native code (SIGSEGV) reading its offsets.
    path = tmp_path / "index.usearch"
    matrix = unit_rows(3000, 32, seed=4)
    rows, ones, zeros = np.arange(1, 3001), np.ones(3000, np.int64), np.zeros(3000, np.int64)

    def opened() -> DenseIndex:
        index = DenseIndex(32, ANY_COST, path, "file-a")
        index.replace(rows, matrix, ones, zeros, [""] * 3000)
        assert index.wait_for_graph(60)
        return index

    opened()
    data = bytearray(path.read_bytes())
    for at in range(64, len(data), max(1, len(data) // 64)):
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    reopened = opened()
    assert not reopened._graph.loaded  # rebuilt from the rows instead
    assert {key for key, _ in reopened.search(matrix[7], 10)} & {8}


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
