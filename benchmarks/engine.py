"""Engine benchmark: indexing throughput, retrieve latency per mode, filtered recall, memory.

.venv/bin/python benchmarks/engine.py [--quick]     (same as `rcpkit bench engine`)
"""

from __future__ import annotations

import sys

from rcpkit.bench.engine import run

if __name__ == "__main__":
    raise SystemExit(run(quick="--quick" in sys.argv))
