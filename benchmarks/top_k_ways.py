"""The lexical top k's two ways on synthetic postings: pruning always, and as the index chooses.

    python benchmarks/top_k_ways.py ROWS [--queries 120]

Builds in-memory postings of ROWS synthetic rows (Zipf words, 20-200 per row),
then times each query both ways, interleaved: MaxScore pruning forced
(``_DIRECT_POSTINGS = 0``) and the index's own choice (every term scored in one
pass when the terms hold few postings). Three query kinds: 6 and 12 Zipf words
(head terms pruning skips) and 20 mid-frequency terms of like weight (a
feedback pass's). Both ways must give the same keys; the p50 of each is printed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from rcpkit.engine.index import _postings

VOCABULARY = 50_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rows", type=int)
    parser.add_argument("--queries", type=int, default=120)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    zipf = 1 / np.arange(1, VOCABULARY + 1) ** 1.05
    zipf /= zipf.sum()
    postings = _postings.Postings()
    lengths = rng.integers(20, 200, args.rows).astype(np.float64)
    for start in range(0, args.rows, 20_000):
        rows = [
            ([], [f"w{t}" for t in rng.choice(VOCABULARY, int(lengths[i]), p=zipf)])
            for i in range(start, min(args.rows, start + 20_000))
        ]
        postings.extend(start, rows, lengths[start : start + len(rows)])
    view = _postings.LexicalView(
        keys=np.arange(args.rows, dtype=np.int64),
        lengths=lengths,
        visible=None,
        documents=args.rows,
        total_length=float(lengths.sum()),
        allowed=None,
        frequency_cache={},
    )
    chosen = _postings._DIRECT_POSTINGS
    for kind in ("6 Zipf words", "12 Zipf words", "20 mid-frequency terms"):
        for k in (10, 100):
            timings: dict[str, list[float]] = {"pruning": [], "chosen": []}
            for _ in range(args.queries):
                if kind.startswith("20"):
                    low = int(rng.choice([5, 20, 50, 200, 1000, 5000]))
                    terms = [f"w{t}" for t in rng.integers(low, low * 5, 20)]
                else:
                    terms = [f"w{t}" for t in rng.choice(VOCABULARY, int(kind[:2]), p=zipf)]
                found = {}
                for way, threshold in (("pruning", 0), ("chosen", chosen)):
                    _postings._DIRECT_POSTINGS = threshold
                    started = time.perf_counter()
                    found[way] = [key for key, _ in _postings.top_k(postings, terms, k, view)]
                    timings[way].append((time.perf_counter() - started) * 1000)
                assert found["pruning"] == found["chosen"], terms
            _postings._DIRECT_POSTINGS = chosen
            pruning, own = (statistics.median(timings[way]) for way in ("pruning", "chosen"))
            line = f"{args.rows:,} rows, {kind}, k {k}"
            print(f"{line}: pruning {pruning:.3f} ms, chosen {own:.3f} ms")


if __name__ == "__main__":
    main()
