"""`rcpkit index` throughput alone: the engine suite's folder row, without the other rows.

.venv/bin/python benchmarks/index_folder.py [FILES]     (default 25, as `bench engine --quick`)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rcpkit_bench.engine import _folder_indexing
from rcpkit_bench.report import collecting

if __name__ == "__main__":
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as folder, collecting() as figures:
        _folder_indexing(Path(folder), files)
    for figure in figures:
        assert figure.baseline_value is not None and figure.ratio is not None
        print(
            f"{figure.name}: {figure.value:.1f} {figure.unit} against {figure.baseline}: "
            f"{figure.baseline_value:.1f} ({figure.ratio:.2f}×, target ≥ {figure.target}×); "
            f"{figure.note}"
        )
