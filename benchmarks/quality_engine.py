"""The real ``retrieve`` in-process over a lab index, per configuration, per query half.

    PYTHONPATH=src python benchmarks/quality_engine.py DATASET [--format judged] \
        [--set prf=false --set prf_dense_weight=0.5 ...] [--params '{"mode": "sparse"}']

Opens the index ``benchmarks/quality_lab.py`` built (``/tmp/rcpkit-lab/…``),
runs every query through ``rcpkit.engine.retrieve.pipeline.retrieve`` as ``rcpkit
eval`` asks it (k 100, unit document, seed 0), and prints nDCG@10 on the dev
and held-out halves, the p50 latency and the p50 of each stage. It is the
check that the pipeline code reproduces what the lab measured in numpy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import msgspec

from rcpkit.engine.config import load_config
from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.open import open_engine
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.evaluation.dataset import load_dataset
from rcpkit.evaluation.harness import document_ids
from rcpkit.evaluation.metrics import ranked_run, score_run
from rcpkit.evaluation.split import split_queries
from rcpkit.handlers.query import query_of
from rcpkit.protocol import messages as m
from rcpkit.server.context import RequestContext

CACHE = Path("/tmp/rcpkit-lab")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _filter(engine: Any, raw: object) -> Any:
    """The §8 filter of ``--params``, parsed as the server runtime would (ctx.filter)."""
    if raw is None:
        return None
    config = engine.config
    return parse_filter(raw, config.filter_fields, OPERATORS, array_fields=config.array_fields)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--format", default="judged")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--params", default="{}", help="extra retrieve params (JSON)")
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    settings = {k: _value(v) for k, v in (item.split("=", 1) for item in args.set)}
    folder = CACHE / f"{dataset.name}-{args.format}" / "index"
    engine = open_engine(load_config(None, index=folder, **settings))
    extra = json.loads(args.params)
    ranking: dict[str, list[str]] = {}
    latency: list[float] = []
    stages: dict[str, list[float]] = {}
    for query_id, text in dataset.queries.items():
        params = msgspec.convert({"query": text, "k": 100, "unit": "document", "seed": 0,
                                  "includeText": False, **extra}, m.RetrieveParams)  # fmt: skip
        started = time.perf_counter()
        query = query_of(params, _filter(engine, params.filter))
        result = retrieve(engine, query, RequestContext(0, "retrieve", {}, deadline=None))
        latency.append((time.perf_counter() - started) * 1000)
        ranking[query_id] = document_ids(result.hits)[:100]
        for name, ms in (result.usage.stages or {}).items() if result.usage else ():
            stages.setdefault(name, []).append(ms)
    engine.close()
    parts = []
    for half in ("dev", "heldout", "all"):
        ids = split_queries(dataset.queries, half)
        qrels = {q: dataset.qrels[q] for q in ids}
        scores = score_run(qrels, ranked_run({q: ranking[q] for q in ids}))
        parts.append(f"{half} {scores['nDCG@10']:.4f}")
    timing = " ".join(f"{n} {statistics.median(v):.1f}" for n, v in stages.items())
    label = " ".join(args.set) + (f" {extra}" if extra else "") or "defaults"
    print(f"{label:<40} {'  '.join(parts)}  p50 {statistics.median(latency):.1f} ms  [{timing}]")


if __name__ == "__main__":
    main()
