"""HTTP benchmark: rcpkit serve --http vs the reference SDK's serve_http, driven by wrk.

.venv/bin/python benchmarks/http.py [--quick] [--json FILE]   (= `rcpkit bench http`; needs wrk)
"""

from __future__ import annotations

import os
import sys

# Run as a script, this folder comes first on sys.path, and this file's name
# would shadow the standard library's `http` package for everything imported.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != _here]

from rcpkit.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["bench", "http", *sys.argv[1:]]))
