"""faiss HNSW's recall@10 / latency curve against rcpkit's exact search, at one corpus size.

.venv/bin/python benchmarks/hnsw_curve.py 1m [--folder DIR] [--queries 50]

The peer half of `rcpkit bench engine`'s HNSW rows without usearch's graph (the
slowest build on two cores), for sizes where the full bench is too long: the same
synthetic corpus (`build`, kept in DIR), the same tie-aware recall against exact
search, faiss IndexHNSWFlat M=32 efConstruction=128 built on 2 threads, searched on
one; rcpkit's dense search as it serves (exact above the ANN threshold it reads).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import faiss
import numpy as np

from rcpkit.cli.bench_options import _size
from rcpkit_bench.engine_peers import _call, _recall, _texts, build, faiss_hnsw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=_size)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/rcpkit-hnsw-curve"))
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    engine = build(args.folder / f"z{args.size}", args.size, graphs=False)
    keys, matrix, _, removed, _ = engine.store.vectors()
    keys, matrix = keys[removed == 0], np.ascontiguousarray(matrix[removed == 0])
    questions = [" ".join(t.split()[:6]) for t in _texts(args.queries, seed=3)]
    vectors = engine.embedder().embed(questions, "query").astype(np.float32)
    exact = [matrix @ v for v in vectors]
    started = time.perf_counter()
    hnsw = faiss_hnsw(faiss, matrix)
    print(f"{args.size:,} chunks; faiss HNSW built in {time.perf_counter() - started:.0f} s")
    ours = [_call(engine.dense.search, v, 10) for v in vectors]
    recall = statistics.mean(
        _recall([key for key, _ in found], keys, truth)
        for (_, found), truth in zip(ours, exact, strict=True)
    )
    print(f"rcpkit dense as served: recall@10 {recall:.3f}, p50 "
          f"{statistics.median(took for took, _ in ours):.1f} ms")  # fmt: skip
    for ef in (64, 256, 1024, 4096, 16384):
        hnsw.hnsw.efSearch = ef
        runs = [_call(hnsw.search, v[None, :], 10) for v in vectors]
        recall = statistics.mean(
            _recall(keys[got[0]].tolist(), keys, truth)
            for (_, (_, got)), truth in zip(runs, exact, strict=True)
        )
        took = statistics.median(t for t, _ in runs)
        print(f"faiss HNSW M=32 ef={ef}: recall@10 {recall:.3f}, p50 {took:.1f} ms", flush=True)
    engine.close()


if __name__ == "__main__":
    main()
