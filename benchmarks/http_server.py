"""HTTP benchmark: rcpkit serve --http vs the reference SDK's serve_http, driven by wrk.

.venv/bin/python benchmarks/http_server.py [--quick] [--json FILE]   (= `rcpkit bench http`)
needs wrk.
"""

from __future__ import annotations

import sys

from rcpkit.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["bench", "http", *sys.argv[1:]]))
