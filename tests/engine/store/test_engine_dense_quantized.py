"""Exact dense search through int8 codes (``index/_quantized.py``): the float top k, always.

The int8 estimate of every row is within a proven bound of its cosine, and every
row that could reach the k-th cosine is rescored in float, so these compare the
quantized path with the float product on the same index, hit for hit.
"""

from __future__ import annotations

import numpy as np
import pytest

from rcpkit.engine.index._quantized import integer_kernel
from rcpkit.engine.index.dense import DenseIndex, DensePolicy

pytestmark = pytest.mark.skipif(integer_kernel() is None, reason="no onnxruntime MatMulInteger")

ROWS, DIMENSION = 12_000, 64


def clustered(count: int, seed: int) -> np.ndarray:
    """Near-duplicate rows around a few centres: many cosines a hair apart (the hard case)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((8, DIMENSION)).astype(np.float32)
    rows = centres[rng.integers(0, 8, count)] + 0.05 * rng.standard_normal((count, DIMENSION))
    rows = rows.astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def index_of(rows: np.ndarray, quantized: bool, removed: np.ndarray | None = None) -> DenseIndex:
    policy = DensePolicy(quantized=quantized, quantized_min_size=1_000, ann_min_size=10**9)
    index = DenseIndex(DIMENSION, policy)
    count = len(rows)
    keys = np.arange(1, count + 1, dtype=np.int64)
    gone = np.zeros(count, dtype=np.int64) if removed is None else removed
    tenants = ["" if i % 5 else "other" for i in range(count)]
    index.extend(keys, rows, np.ones(count, dtype=np.int64), gone, tenants)
    if quantized:
        assert index.wait_for_quantized(60)
    return index


def assert_same(found: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [key for key, _ in found] == [key for key, _ in want]
    assert np.allclose([s for _, s in found], [s for _, s in want], atol=1e-6, rtol=0)


def test_the_quantized_path_returns_the_float_top_k_on_near_ties() -> None:
    rows = clustered(ROWS, seed=1)
    fast, slow = index_of(rows, True), index_of(rows, False)
    assert fast._read_state().quantized is not None  # the int8 path really answers
    for query in clustered(40, seed=2):
        for k in (1, 10, 50):
            assert_same(fast.search(query, k), slow.search(query, k))


def test_filters_tenants_and_retired_rows_stay_exact_on_the_quantized_path() -> None:
    rows = clustered(ROWS, seed=3)
    removed = np.where(np.arange(ROWS) % 7 == 0, 3, 0).astype(np.int64)  # retired at v3
    fast, slow = index_of(rows, True, removed), index_of(rows, False, removed)
    allowed = np.arange(1, ROWS + 1, dtype=np.int64)[np.arange(ROWS) % 3 != 0]  # 67 % kept
    for query in clustered(20, seed=4):
        for version in (None, 2):
            for tenant in (None, "other"):
                assert_same(
                    fast.search(query, 10, None, version, tenant),
                    slow.search(query, 10, None, version, tenant),
                )
        assert_same(fast.search(query, 10, allowed), slow.search(query, 10, allowed))


def test_rows_added_after_the_codes_were_built_are_searched() -> None:
    rows = clustered(ROWS, seed=5)
    fast = index_of(rows, True)
    newer = clustered(500, seed=6)
    keys = np.arange(ROWS + 1, ROWS + 501, dtype=np.int64)
    ones, zeros = np.ones(500, dtype=np.int64), np.zeros(500, dtype=np.int64)
    fast.extend(
        keys, newer, ones, zeros, ["" if i % 5 else "other" for i in range(ROWS, ROWS + 500)]
    )
    slow = index_of(np.vstack([rows, newer]), False)
    assert fast._read_state().quantized.rows == ROWS + 500  # type: ignore[union-attr]
    for query in newer[1:5]:  # each query is a new row the unscoped caller sees
        assert_same(fast.search(query, 10), slow.search(query, 10))
        assert fast.search(query, 1)[0][0] > ROWS


def test_transposed_code_blocks_give_every_row_its_exact_product() -> None:
    """Issue 31 item 2: the codes are held dimension x rows, in blocks, appended in place."""
    from rcpkit.engine.index._quantized import CodeColumns

    kernel = integer_kernel()
    assert kernel is not None
    rng = np.random.default_rng(7)
    codes = rng.integers(-127, 128, (30_000, 48), dtype=np.int8)
    columns = CodeColumns(48)
    columns.extend(codes[:1_000])  # a first block of exactly the built rows
    early_blocks, early_rows = columns.view()
    for first in range(1_000, 30_000, 2_500):  # then blocks for appended rows
        columns.extend(codes[first : first + 2_500])
    blocks, rows = columns.view()
    assert rows == 30_000 and len(blocks) > 2
    sums = codes.astype(np.int64).sum(axis=1).astype(np.int32)
    query = rng.integers(-kernel.query_range, kernel.query_range + 1, 48).astype(np.int8)
    want = codes.astype(np.int64) @ query.astype(np.int64)
    assert np.array_equal(kernel.scores(blocks, rows, sums, query), want)
    # A view taken before the appends still reads exactly its own rows.
    assert np.array_equal(kernel.scores(early_blocks, early_rows, sums, query), want[:1_000])
