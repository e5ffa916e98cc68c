"""Exact dense search: float product against int8 codes + float rescoring, one run (issue 31).

    python benchmarks/dense_quantized.py [--rows 200000,1000000] [--queries 200] [--seed 0]

For each size, a seeded synthetic matrix (dimension 384, MiniLM's) is held by two
``DenseIndex`` objects over the same array (``adopt``: no copy), one with
``DensePolicy(quantized=False)`` (the float product the engine answers with when
quantization is off or not yet built) and one with the default ``quantized=True``
(``_quantized.py``: int8 codes through onnxruntime's ``MatMulInteger``, then float
rescoring). Both have the ANN graph off (``ann_min_size`` past the size), so every
search is exact, on one thread, as the engine's are. Each query is searched by both,
in alternating order; the table gives the p50/p95 of each, the ratio of the p50s,
recall@10 of the int8 path against the float one and how many top-10 lists are
identical (keys and order), and how many rows the int8 path rescored in float.
(Until 2026-12-05 a second table timed the integer kernel in the engine's
layout of then, codes rows x dimension times the query as one column, against
the codes transposed: 111 against 14 ms at 1M rows. The engine now holds them
transposed, in blocks of rows, so the first table is that layout.)

The vectors are synthetic, not real embeddings: a mixture of Gaussians on the unit
sphere shaped like sentence embeddings (a shared mean direction, unequal spread per
dimension, clusters whose members have cosine ~0.65 with each other and ~0.13 with
the rest). Queries are rows perturbed by noise (cosine ~0.9 with their row), so a
top 10 is the row and nine neighbours from a dense band of its cluster, the case
where the int8 bound has to rescore the most rows.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index._quantized import (
    candidates,
    integer_kernel,
)
from rcpkit.engine.index.dense import DenseIndex, DensePolicy

DIMENSION = 384
CLUSTERS = 4096
MEAN_LENGTH = 0.5  # the shared direction every sentence embedding leans towards
SPREAD = 0.8  # a row's distance from its cluster's centre, relative to the centre's length
QUERY_NOISE = 0.5  # a query's distance from the row it was drawn near
WARM = 5  # queries run by both paths before timing
_BLOCK = 65_536

Matrix = npt.NDArray[np.float32]


def _normalised(rows: Matrix) -> Matrix:
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def synthetic(rows: int, rng: np.random.Generator) -> Matrix:
    """``rows`` unit vectors: a shared mean, one of ``CLUSTERS`` centres, per-dimension spread."""
    shape = np.exp(rng.normal(0.0, 0.35, DIMENSION)).astype(np.float32)
    shape /= np.sqrt(np.mean(shape**2))  # unequal spread per dimension, unit mean square
    mean = _normalised(rng.standard_normal((1, DIMENSION), dtype=np.float32))[0] * MEAN_LENGTH
    centres = _normalised(rng.standard_normal((CLUSTERS, DIMENSION), dtype=np.float32) * shape)
    matrix = np.empty((rows, DIMENSION), dtype=np.float32)
    for first in range(0, rows, _BLOCK):
        count = min(_BLOCK, rows - first)
        noise = rng.standard_normal((count, DIMENSION), dtype=np.float32) * shape
        noise *= SPREAD / np.sqrt(DIMENSION)
        noise += centres[rng.integers(0, CLUSTERS, count)]
        noise += mean
        matrix[first : first + count] = _normalised(noise)
    return matrix


def near_rows(matrix: Matrix, count: int, rng: np.random.Generator) -> Matrix:
    """``count`` unit queries, each a random row plus noise of length ``QUERY_NOISE``."""
    picked = matrix[rng.choice(len(matrix), count, replace=False)]
    noise = _normalised(rng.standard_normal(picked.shape, dtype=np.float32)) * QUERY_NOISE
    return _normalised(picked + noise)


def index(matrix: Matrix, quantized: bool) -> DenseIndex:
    policy = DensePolicy(ann_min_size=len(matrix) + 1, quantized=quantized)
    dense = DenseIndex(DIMENSION, policy)
    rows = len(matrix)
    keys = np.arange(rows, dtype=np.int64)
    versions = np.ones(rows, dtype=np.int64)
    dense.adopt(keys, matrix, versions, np.zeros(rows, np.int64), np.zeros(rows, np.int32), [""])
    return dense


def timed(dense: DenseIndex, query: Matrix) -> tuple[float, list[int]]:
    start = time.perf_counter()
    found = dense.search(query, 10)
    return (time.perf_counter() - start) * 1000, [key for key, _ in found]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(rows: int, queries: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    matrix = synthetic(rows, rng)
    questions = near_rows(matrix, queries + WARM, rng)
    floats, quantized = index(matrix, False), index(matrix, True)
    start = time.perf_counter()
    if not quantized.wait_for_quantized(3600):
        raise RuntimeError("no int8 codes: is onnxruntime (the models extra) installed?")
    built = time.perf_counter() - start
    view = quantized.state.quantized
    assert view is not None
    float_ms, int8_ms, recall, identical, rescored = [], [], [], 0, []
    for number, query in enumerate(questions):
        if number % 2:
            took_int8, hits_int8 = timed(quantized, query)
            took_float, hits_float = timed(floats, query)
        else:
            took_float, hits_float = timed(floats, query)
            took_int8, hits_int8 = timed(quantized, query)
        if number < WARM:
            continue
        float_ms.append(took_float)
        int8_ms.append(took_int8)
        recall.append(len(set(hits_int8) & set(hits_float)) / len(hits_float))
        identical += hits_int8 == hits_float
        found = candidates(view, matrix, query, 10, None, rows)
        rescored.append(float(len(found[0])) if found is not None else float(rows))
    return {
        "rows": rows,
        "float_p50": statistics.median(float_ms),
        "float_p95": percentile(float_ms, 0.95),
        "int8_p50": statistics.median(int8_ms),
        "int8_p95": percentile(int8_ms, 0.95),
        "recall": statistics.mean(recall),
        "identical": identical,
        "queries": len(recall),
        "rescored": statistics.median(rescored),
        "built": built,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="200000,1000000", help="sizes in turn")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    kernel = integer_kernel()
    if kernel is None:
        raise SystemExit("onnxruntime's MatMulInteger is missing or inexact: nothing to compare")
    print(f"int8 kernel: onnxruntime MatMulInteger, query codes in +-{kernel.query_range}")
    print(
        "| rows | float exact p50 / p95 ms | int8 exact p50 / p95 ms | float p50 / int8 p50 "
        "| recall@10 vs float | identical top-10 | rows rescored p50 | codes built s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for rows in [int(part) for part in args.rows.split(",")]:
        got = measure(rows, args.queries, args.seed)
        print(
            f"| {rows:,} | {got['float_p50']:.2f} / {got['float_p95']:.2f} "
            f"| {got['int8_p50']:.2f} / {got['int8_p95']:.2f} "
            f"| {got['float_p50'] / got['int8_p50']:.2f}x | {got['recall']:.3f} "
            f"| {got['identical']:.0f} / {got['queries']:.0f} | {got['rescored']:,.0f} "
            f"| {got['built']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
