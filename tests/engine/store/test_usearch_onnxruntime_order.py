"""An ANN search followed by an ONNX model load must not crash the process.

usearch 2.26's compiled module, loaded before onnxruntime, makes onnxruntime's
C++ runtime initialisation segfault. In production that is the embedder or a
cross-encoder loading after a dense search went through the HNSW graph. The
order runs in a child so a segfault fails this test instead of killing pytest.
"""

from __future__ import annotations

import subprocess
import sys

ANN_SEARCH_THEN_MINILM = """
import numpy as np
from rcpkit.engine.index.dense import DenseIndex, DensePolicy

rows = np.random.default_rng(1).standard_normal((1200, 32)).astype(np.float32)
rows /= np.linalg.norm(rows, axis=1, keepdims=True)
policy = DensePolicy(ann_min_size=1000, ann_max_cost=1e9, ann_calibration_queries=8)
index = DenseIndex(32, policy)
keys = np.arange(1, 1201, dtype=np.int64)
zeros = np.zeros(1200, dtype=np.int64)
index.replace(keys, rows, np.ones(1200, dtype=np.int64), zeros, [""] * 1200)
assert index.wait_for_graph(60), "the HNSW graph was not built"
for row in rows[:8]:  # the queries the graph's calibration measures on
    index.search(row, 5)
assert index.wait_for_ann(60), "the HNSW graph was not calibrated"
assert len(index.search(rows[0], 5)) == 5

from rcpkit.engine.models import load_minilm

assert len(load_minilm().embed(["a loaded model after an ANN search"])[0]) == 384
print("ok")
"""


def test_the_embedder_loads_after_an_ann_search_has_run() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ANN_SEARCH_THEN_MINILM], capture_output=True, timeout=180
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert done.stdout.strip() == b"ok"
