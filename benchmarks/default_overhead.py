"""The default retrieve's p50 against the one-pass hybrid, in process, each query both ways in turn.

    python benchmarks/default_overhead.py COLLECTION INDEX [--queries N] [--set JSON] [--cold]

COLLECTION is a BEIR-layout folder (its ``queries.jsonl``), INDEX an index of its
documents (``rcpkit eval COLLECTION --index INDEX --layout meta-title`` builds one;
the quality lab's ``/tmp/rcpkit-lab/NAME-judged/index`` is one too). Every query
runs as the one-pass RRF hybrid and then as the default (feedback, proximity,
smoothing), interleaved so the machine's drift falls on both; the line printed
is both medians, their ratio (issue 33's "p50 ≤ 1.5× the one-pass hybrid") and
the default's median per stage (``usage.stages``). ``--set`` passes engine
settings, e.g. ``'{"smoothing_weight": 0}'`` to measure without a stage.
``--cold`` empties the process's memos of analysed bodies before each query, as
a collection much larger than them meets most bodies for the first time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rcpkit.engine.config import load_config
from rcpkit.engine.open import open_engine
from rcpkit.engine.query import Fusion, Query
from rcpkit.engine.retrieve import proximity
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.text import analysis
from rcpkit.server.context import RequestContext


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--set", default="{}", help="engine settings as a JSON object")
    parser.add_argument("--cold", action="store_true", help="no analysed body remembered")
    args = parser.parse_args()
    engine = open_engine(load_config(None, index=args.index, **json.loads(args.set)))
    lines = (args.collection / "queries.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines][: args.queries]
    ctx = RequestContext(0, "retrieve", {}, deadline=None)
    for text in texts[:10]:  # the model and the caches warm
        retrieve(engine, Query(text, k=10), ctx)
    timings: dict[str, list[float]] = {"one-pass": [], "default": []}
    stages: dict[str, list[float]] = {}
    for text in texts:
        for kind, query in (
            ("one-pass", Query(text, k=10, mode="hybrid", fusion=Fusion("rrf"))),
            ("default", Query(text, k=10)),
        ):
            if args.cold:
                _forget_bodies()
            started = time.perf_counter()
            result = retrieve(engine, query, ctx)
            timings[kind].append((time.perf_counter() - started) * 1000)
            if kind == "default":
                for stage, ms in ((result.usage and result.usage.stages) or {}).items():
                    stages.setdefault(stage, []).append(ms)
    engine.close()
    one_pass, default = (statistics.median(timings[kind]) for kind in ("one-pass", "default"))
    per_stage = ", ".join(f"{s} {statistics.median(v):.2f}" for s, v in stages.items())
    print(
        f"{len(texts)} queries: one-pass hybrid p50 {one_pass:.2f} ms, default {default:.2f} ms,"
        f" {default / one_pass:.3f}x; default stages (median ms): {per_stage}"
    )


def _forget_bodies() -> None:
    # The engine's two memos of analysed bodies (private: nothing else empties them).
    analysis._STORED = analysis._Remembered(4096)
    proximity._positions.cache_clear()


if __name__ == "__main__":
    main()
