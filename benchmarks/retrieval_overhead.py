"""`rcpkit bench engine`'s retrieval rows at one corpus size, without the rest of the suite.

    python benchmarks/retrieval_overhead.py 100000

Runs the suite's own ``_retrieval`` (hashing vectors, 200 six-word queries): dense,
sparse and hybrid p50, and the default hybrid retrieve against the raw lexical +
dense index calls it makes, in one run. A ``rcpkit.toml`` in the working directory
applies, so ``[engine] proximity_weight = 0`` (or ``prf = false``) measures the
pipeline without that stage. The suite's filtered-recall and rerank rows are skipped.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import rcpkit_bench.engine as suite
from rcpkit_bench.report import collecting


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    suite._rerank_retrieve = lambda *args, **kwargs: None  # type: ignore[assignment]
    suite._filtered_recall = lambda *args, **kwargs: None  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="rcpkit-overhead-") as folder, collecting() as rows:
        suite._retrieval(Path(folder), count, 200, None)
    for row in rows:
        ratio = f"  {row.value / row.baseline_value:.2f}x" if row.baseline_value else ""
        print(f"{row.name}: {row.value:.2f} {row.unit}{ratio}")


if __name__ == "__main__":
    main()
