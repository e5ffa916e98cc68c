"""Protocol benchmark: stdio throughput, head-of-line blocking, cold start.

.venv/bin/python benchmarks/protocol.py [--quick]     (same as `rcpkit bench protocol`)
"""

from __future__ import annotations

import sys

from rcpkit.bench.protocol import run

if __name__ == "__main__":
    raise SystemExit(run(quick="--quick" in sys.argv))
