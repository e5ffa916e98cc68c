"""``rcpkit bench engine``: indexing throughput, retrieve latency, filtered recall, memory.

Every figure is a ratio against a baseline measured in the same run:
indexing against the raw embedder on the same texts, hybrid latency against
the raw lexical and dense index calls it makes, filtered ANN recall against
exact search. Corpora are synthetic (Zipf-distributed words) with a
``bucket`` field for filter selectivity. The 10k/100k corpora are embedded
with the hashing embedder (MiniLM would take ~15 min for 100k chunks here);
indexing throughput is measured with the real MiniLM.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from rcpkit.engine.analysis import analyze, fts_query
from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine, open_engine
from rcpkit.engine.filters import OPERATORS, compile_sqlite, parse_filter
from rcpkit.engine.indexer import content_hash_of, index_documents
from rcpkit.engine.ingest import SourceDocument
from rcpkit.engine.retrieval import retrieve
from rcpkit.protocol import messages as m
from rcpkit.server.context import RequestContext

__all__ = ["run"]

_VOCABULARY = [f"w{i}" for i in range(20_000)]
_WEIGHTS = [1 / (rank + 1) for rank in range(len(_VOCABULARY))]  # Zipf


def _texts(count: int, seed: int, words: int = 40) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(_VOCABULARY, _WEIGHTS, k=words)) for _ in range(count)]


def _documents(texts: list[str]) -> list[SourceDocument]:
    return [
        SourceDocument(
            id=f"d{i}",
            text=text,
            title=None,
            uri="",
            modality="text",
            meta={"bucket": i % 1000},
            pages=None,
            content_hash=content_hash_of(text, i, None),
        )
        for i, text in enumerate(texts)
    ]


def _engine(folder: Path, embedder: str, **settings: Any) -> Engine:
    fields = {"bucket": "int"}
    config = load_config(None, index=folder, embedder=embedder, filter_fields=fields, **settings)
    return open_engine(config)


def _percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94]


def _timed(function: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _indexing(folder: Path, count: int) -> None:
    texts = _texts(count, seed=1)
    engine = _engine(folder / "minilm", "minilm")
    embedder = engine.embedder()
    embedder.embed(texts[:32])  # warm up
    raw = min(_timed(lambda: embedder.embed(texts), 1))
    full = min(_timed(lambda: index_documents(engine, _documents(texts), chunk=False), 1))
    print(
        f"| index/add {count} chunks, MiniLM | {count / full * 1000:,.0f} chunks/s "
        f"| raw embedder {count / raw * 1000:,.0f}/s | **{raw / full:.2f}×** (target ≥ 0.8) |"
    )
    engine.close()


def _retrieval(folder: Path, count: int, queries: int) -> None:
    engine = _engine(folder / f"h{count}", "hashing:384")
    texts = _texts(count, seed=2)
    for start in range(0, count, 5000):
        index_documents(engine, _documents(texts[start : start + 5000]), chunk=False)
    questions = [" ".join(text.split()[:6]) for text in _texts(queries, seed=3)]
    context = RequestContext(0, "retrieve", {}, deadline=None)
    for mode in ("dense", "sparse", "hybrid"):
        samples = []
        for q in questions:
            params = m.RetrieveParams(query=q, k=10, mode=mode)
            samples.append(_timed(partial(retrieve, engine, params, context), 1)[0])
        p50, p95 = _percentiles(samples)
        print(f"| retrieve {mode}, {count:,} chunks | p50 {p50:.2f} ms | p95 {p95:.2f} ms | |")
    embedder = engine.embedder()
    raw_samples, hybrid_samples = [], []
    for q in questions:
        vector = embedder.embed([q], "query")[0]
        match = fts_query(analyze(q)) or '""'

        def raw(vector: Any = vector, match: str = match) -> None:
            engine.dense.search(vector, 100)
            engine.store.lexical(match, 100, None, [])

        raw_samples.append(_timed(raw, 1)[0])
        hybrid = m.RetrieveParams(query=q, k=10, mode="hybrid")
        hybrid_samples.append(_timed(partial(retrieve, engine, hybrid, context), 1)[0])
    ratio = statistics.median(hybrid_samples) / statistics.median(raw_samples)
    print(
        f"| hybrid p50 ÷ (raw lexical + raw dense calls), {count:,} | "
        f"{statistics.median(hybrid_samples):.2f} ms | {statistics.median(raw_samples):.2f} ms "
        f"| **{ratio:.2f}×** (target ≤ 1.5) |"
    )
    _filtered_recall(engine, embedder, questions, count)
    engine.close()


def _filtered_recall(engine: Engine, embedder: Any, questions: list[str], count: int) -> None:
    keys, matrix = engine.store.vectors()
    for label, raw_filter in (
        ("0.1%", {"field": "bucket", "op": "eq", "value": 7}),
        ("1%", {"field": "bucket", "op": "lt", "value": 10}),
        ("10%", {"field": "bucket", "op": "lt", "value": 100}),
        ("50%", {"field": "bucket", "op": "lt", "value": 500}),
    ):
        tree = parse_filter(raw_filter, {"bucket": "int"}, OPERATORS)
        where, arguments = compile_sqlite(tree)
        allowed = engine.store.filtered_keys(where, arguments)
        mask = np.isin(keys, allowed)
        recalls = []
        for q in questions[:50]:
            vector = embedder.embed([q], "query")[0]
            found = {key for key, _ in engine.dense.search(vector, 10, allowed)}
            scores = matrix[mask] @ vector
            exact = set(keys[mask][np.argsort(-scores)[:10]].tolist())
            recalls.append(len(found & exact) / max(1, len(exact)))
        print(
            f"| filtered dense recall@10 vs exact, {label} selectivity, {count:,} | "
            f"{statistics.mean(recalls):.3f} | | (target 1.0) |"
        )


def _resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run(quick: bool = False) -> int:
    sizes = [2_000] if quick else [10_000, 100_000]
    print("# rcpkit bench engine\n")
    print("| measure | value | baseline | ratio |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as folder:
        _indexing(Path(folder), 200 if quick else 1_000)
        for size in sizes:
            before = _resident_mb()
            _retrieval(Path(folder), size, 50 if quick else 200)
            print(
                f"| resident memory growth while serving {size:,} chunks | "
                f"{_resident_mb() - before:,.0f} MB | | |"
            )
    return 0
