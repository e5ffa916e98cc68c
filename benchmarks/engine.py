"""Engine benchmark: indexing throughput, retrieve latency per mode, filtered recall, memory.

.venv/bin/python benchmarks/engine.py [--quick] [--json FILE]     (= `rcpkit bench engine`)
"""

from __future__ import annotations

import sys

from rcpkit.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["bench", "engine", *sys.argv[1:]]))
