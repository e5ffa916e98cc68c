"""The default retrieve's p50 against the one-pass hybrid, in process, each query both ways in turn.

    python benchmarks/default_overhead.py COLLECTION INDEX [--queries N] [--set JSON] [--cold]
        [--k K] [--unit UNIT] [--before JSON]

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
``--before`` times the default against the default of a second engine on the
same index with those settings instead of the one-pass hybrid (a default's
change before and after, in one run, interleaved: issue 50's "≤ 1.2× today's
p50"); ``--k`` and ``--unit`` are the retrieve's (10 and chunk). Each side
goes first on every other query.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine
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
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--unit", default="chunk", help="chunk, document or page")
    parser.add_argument(
        "--before", help="settings (JSON) of the default to time against, instead of one-pass"
    )
    args = parser.parse_args()
    engine = open_engine(load_config(None, index=args.index, **json.loads(args.set)))
    before = None
    if args.before is not None:
        before = open_engine(load_config(None, index=args.index, **json.loads(args.before)))
    lines = (args.collection / "queries.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in lines][: args.queries]
    ctx = RequestContext(0, "retrieve", {}, deadline=None)
    for text in texts[:10]:  # the model and the caches warm
        for warmed in (engine, before or engine):
            retrieve(warmed, Query(text, k=args.k, unit=args.unit), ctx)
    baseline = "one-pass" if before is None else "before"
    timings: dict[str, list[float]] = {baseline: [], "default": []}
    stages: dict[str, list[float]] = {}
    for number, text in enumerate(texts):
        pair = _pair(engine, before, text, args.k, args.unit)
        # Each side first on every other query: the second run of a text finds its
        # bodies analysed by the first, and the load drifts within a pair too.
        for kind, timed, query in pair if number % 2 == 0 else pair[::-1]:
            if args.cold:
                _forget_bodies()
            started = time.perf_counter()
            result = retrieve(timed, query, ctx)
            timings[kind].append((time.perf_counter() - started) * 1000)
            if kind == "default":
                for stage, ms in ((result.usage and result.usage.stages) or {}).items():
                    stages.setdefault(stage, []).append(ms)
    for opened in (engine, before):
        if opened is not None:
            opened.close()
    first, default = (statistics.median(timings[kind]) for kind in (baseline, "default"))
    per_stage = ", ".join(f"{s} {statistics.median(v):.2f}" for s, v in stages.items())
    name = "one-pass hybrid" if before is None else f"default with {args.before}"
    print(
        f"{len(texts)} queries (k {args.k}, unit {args.unit}): {name} p50 {first:.2f} ms,"
        f" default {default:.2f} ms, {default / first:.3f}x;"
        f" default stages (median ms): {per_stage}"
    )


def _pair(
    engine: Engine, before: Engine | None, text: str, k: int, unit: str
) -> list[tuple[str, Engine, Query]]:
    """What one query is timed as, in turn: the baseline, then the default."""
    default = Query(text, k=k, unit=unit)
    if before is not None:
        return [("before", before, default), ("default", engine, default)]
    one_pass = Query(text, k=k, unit=unit, mode="hybrid", fusion=Fusion("rrf"))
    return [("one-pass", engine, one_pass), ("default", engine, default)]


def _forget_bodies() -> None:
    # The engine's two memos of analysed bodies (private: nothing else empties them).
    analysis._STORED = analysis._Remembered(4096)
    proximity._positions.cache_clear()


if __name__ == "__main__":
    main()
