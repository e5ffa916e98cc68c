"""The lexical arm and the default against plain bm25s and bm25s + MiniLM RRF, per half (issue 50).

    PYTHONPATH=src python benchmarks/lexical_parity.py COLLECTION... [--json FILE]

For each BEIR-layout COLLECTION: the quality lab's index of it (built once,
``benchmarks/quality_lab.py``; documents loaded as outside judges load them),
every query through the real ``retrieve`` (k 100, unit document, seed 0) as
``mode: "sparse"`` and as the default; beside them, in the same run, bm25s
(``rcpkit.evaluation.baseline``: k1 0.9, b 0.4, Snowball English, English stop
words, title + text) and the RRF (k 60) of bm25s's top 100 with the exact
MiniLM top 100 (the lab's cached chunk vectors, a document by its best chunk).
Printed per half: nDCG@10 of each and its ratio to bm25s, R@100 of the default
and of that hybrid. Quality is deterministic: run it on two trees (before and
after a change) and compare the lines.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality_lab as lab
from rcpkit.engine.config import load_config
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.open import open_engine
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.evaluation.baseline import bm25_baseline
from rcpkit.evaluation.dataset import Dataset, load_dataset
from rcpkit.evaluation.harness import document_ids
from rcpkit.evaluation.metrics import Run, ranked_run, score_run
from rcpkit.evaluation.split import split_queries
from rcpkit.handlers.query import query_of
from rcpkit.protocol import messages as m
from rcpkit.server.context import RequestContext

lab.CACHE = Path(os.environ.get("LAB_CACHE", str(lab.CACHE)))  # the lab's caches, or others
DEPTH = 100
RRF_K = 60
MEASURES = ("nDCG@10", "R@100")
_HASHING = "hashing:64"  # the sparse-only index's vectors (the sparse arm reads none)


def sparse_index(dataset: Dataset) -> Path:
    """An index for the sparse arm alone: hashing vectors, built in seconds, not MiniLM's."""
    folder = lab.CACHE / f"{dataset.name}-sparse" / "index"
    done = folder.parent / "built"
    if not done.exists():
        engine = open_engine(load_config(None, index=folder, embedder=_HASHING))
        documents = lab.source_documents(dataset, "judged")
        for start in range(0, len(documents), 256):
            index_documents(engine, documents[start : start + 256])
        engine.close()
        done.touch()
    return folder


def engine_runs(
    dataset: Dataset, folder: Path, modes: tuple[str, ...], **settings: str
) -> dict[str, Run]:
    """The real retrieve's document rankings, as sparse and as the default."""
    engine = open_engine(load_config(None, index=folder, **settings))
    runs: dict[str, Run] = {}
    asked = {"sparse": {"mode": "sparse"}, "default": {}}
    for name, extra in ((mode, asked[mode]) for mode in modes):
        ranking = {}
        for query_id, text in dataset.queries.items():
            params = msgspec.convert({"query": text, "k": DEPTH, "unit": "document", "seed": 0,
                                      "includeText": False, **extra}, m.RetrieveParams)  # fmt: skip
            result = retrieve(engine, query_of(params, None), _context())
            ranking[query_id] = document_ids(result.hits)[:DEPTH]
        runs[name] = ranked_run(ranking)
    engine.close()
    return runs


def _context() -> RequestContext:
    return RequestContext(0, "retrieve", {}, deadline=None)


def dense_run(data: dict[str, Any]) -> dict[str, list[str]]:
    """Exact MiniLM: every chunk's cosine, a document by its best chunk, top 100."""
    doc_of = np.asarray(data["doc_of"])
    names, inverse = np.unique(doc_of, return_inverse=True)
    out = {}
    for query_id, scores in zip(data["query_ids"], data["query_vectors"] @ data["vectors"].T,
                                strict=True):  # fmt: skip
        best = np.full(len(names), -np.inf)
        np.maximum.at(best, inverse, scores)
        order = np.argsort(-best, kind="stable")[:DEPTH]
        out[query_id] = [str(names[i]) for i in order]
    return out


def rrf_run(*rankings: dict[str, list[str]]) -> Run:
    fused: Run = {}
    for query_id in rankings[0]:
        scores: dict[str, float] = {}
        for ranking in rankings:
            for rank, doc in enumerate(ranking.get(query_id, [])):
                scores[doc] = scores.get(doc, 0.0) + 1.0 / (RRF_K + rank + 1)
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:DEPTH]
        fused[query_id] = dict(best)
    return fused


def measure(path: Path, sparse_only: bool) -> dict[str, dict[str, dict[str, float]]]:
    dataset = load_dataset(path)
    bm25s = bm25_baseline(dataset, DEPTH)
    if sparse_only:
        runs = engine_runs(dataset, sparse_index(dataset), ("sparse",), embedder=_HASHING)
    else:
        data = lab.build(dataset, "judged")
        folder = lab.lab_folder(dataset, "judged") / "index"
        runs = engine_runs(dataset, folder, ("sparse", "default"))
        ranked_bm25s = {q: sorted(d, key=lambda doc: -d[doc]) for q, d in bm25s.items()}
        runs["rrf"] = rrf_run(ranked_bm25s, dense_run(data))
    runs["bm25s"] = bm25s
    out: dict[str, dict[str, dict[str, float]]] = {}
    for half in ("dev", "heldout"):
        ids = split_queries(dataset.queries, half)
        qrels = {q: dataset.qrels[q] for q in ids if q in dataset.qrels}
        out[half] = {
            name: score_run(qrels, {q: run.get(q, {}) for q in qrels}, MEASURES).aggregate
            for name, run in runs.items()
        }
    return out


def _line(got: dict[str, dict[str, float]]) -> str:
    base = got["bm25s"]["nDCG@10"]
    sparse = got["sparse"]["nDCG@10"]
    line = f"{base:.4f}  {sparse:.4f}  {sparse / base:.3f}×"
    if "default" in got:
        default = got["default"]
        line += f"  {default['nDCG@10']:.4f} {default['nDCG@10'] / base:.3f}×"
        line += f"  {default['R@100']:.4f}  {got['rrf']['R@100']:.4f}"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collections", type=Path, nargs="+")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--sparse-only", action="store_true", help="the sparse arm alone (no MiniLM index)"
    )
    args = parser.parse_args()
    results = {}
    print("collection          half     bm25s  sparse  ÷bm25s  default ÷bm25s  R@100 default  rrf")
    for path in args.collections:
        results[path.name] = measure(path, args.sparse_only)
        for half, got in results[path.name].items():
            print(f"{path.name:<19} {half:<8} {_line(got)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
