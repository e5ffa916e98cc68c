"""Protocol benchmark: stdio throughput, head-of-line blocking, cold start.

.venv/bin/python benchmarks/protocol.py [--quick] [--json FILE]     (= `rcpkit bench protocol`)
"""

from __future__ import annotations

import sys

from rcpkit.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["bench", "protocol", *sys.argv[1:]]))
