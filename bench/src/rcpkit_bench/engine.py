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

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.ingest import SourceDocument
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.query import Query, Rerank
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.text.analysis import analyze
from rcpkit.server.context import RequestContext
from rcpkit_bench._synthetic import _documents, _engine, _percentiles, _texts
from rcpkit_bench.report import Figure, Scale, collecting, record

__all__ = ["run"]


def _timed(function: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _indexing(folder: Path, count: int) -> Any:
    texts = _texts(count, seed=1)
    engine = _engine(folder / "minilm", "minilm")
    embedder = engine.embedder()
    embedder.embed(texts[:32])  # warm up
    # Interleaved rounds, best of each: a burst of load on this shared machine hits
    # both sides instead of whichever happened to run during it.
    raw_runs, full_runs = [], []
    for _ in range(2):
        raw_runs += _timed(lambda: embedder.embed(texts), 1)
        full_runs += _timed(lambda: index_documents(engine, _documents(texts), chunk=False), 1)
    raw, full = min(raw_runs), min(full_runs)
    record(
        Figure(
            "engine",
            f"index/add {count:,} chunks, MiniLM",
            count / full * 1000,
            "chunks/s",
            "raw MiniLM embedder, same texts",
            count / raw * 1000,
            target=0.8,
        )
    )
    engine.close()
    return embedder


def _folder_indexing(folder: Path, files: int) -> None:
    """`rcpkit index` (walk, parse, chunk, embed, one commit) against the raw embedder.

    The baseline embeds exactly the texts the run embedded (contextual prefix and
    chunk), in one call with the same threads: all cores for both (issue 14).
    """
    from rcpkit.engine.ingest import iter_documents
    from rcpkit.engine.ingest.folders import index_folders
    from rcpkit.engine.ingest.indexer import document_spans, embedding_inputs

    corpus = folder / "files"
    corpus.mkdir()
    for number, text in enumerate(_texts(files, seed=4, words=600)):
        lines = [f"# Note {number}", "", *(text[i : i + 400] for i in range(0, len(text), 400))]
        (corpus / f"n{number:05d}.md").write_text("\n\n".join(lines) + "\n")
    runs: list[float] = []
    raws: list[float] = []
    for attempt in range(2):
        engine = _engine(folder / f"folder{attempt}", "minilm")
        embedder = engine.embedder()
        embedder.embed(["warm up"] * 16)
        started = time.perf_counter()
        result = index_folders(engine, [corpus])
        runs.append(time.perf_counter() - started)
        inputs = [
            text
            for document in iter_documents([corpus])
            if isinstance(document, SourceDocument)
            for text in embedding_inputs(
                document, document_spans(engine, document, embedder.count_tokens), True
            )
        ]
        raws.append(min(_timed(partial(embedder.embed, inputs), 1)) / 1000)
        tokens = statistics.fmean(embedder.count_tokens(inputs))
        chunk_size, threads = engine.config.max_chunk_tokens, engine.config.threads
        engine.close()
    assert result.chunks == len(inputs)
    record(
        Figure(
            "engine",
            f"rcpkit index {files} Markdown files, {len(inputs)} chunks, MiniLM",
            len(inputs) / min(runs),
            "chunks/s",
            "raw MiniLM embedder, same chunk texts",
            len(inputs) / min(raws),
            target=0.8,
            note=f"chunks ≤ {chunk_size} tokens, {tokens:.0f} tokens/chunk, {threads} threads",
        )
    )


def _retrieval(folder: Path, count: int, queries: int, minilm: Any) -> None:
    engine = _engine(folder / f"h{count}", "hashing:384")
    texts = _texts(count, seed=2)
    for start in range(0, count, 5000):
        # Distinct ids per batch: re-used ids would be upserts, not a larger corpus.
        index_documents(engine, _documents(texts[start : start + 5000], start), chunk=False)
    questions = [" ".join(text.split()[:6]) for text in _texts(queries, seed=3)]
    context = RequestContext(0, "retrieve", {}, deadline=None)
    for mode in ("dense", "sparse", "hybrid"):
        samples = []
        for q in questions:
            params = Query(q, k=10, mode=mode)
            samples.append(_timed(partial(retrieve, engine, params, context), 1)[0])
        p50, p95 = _percentiles(samples)
        name = f"retrieve {mode} p50, {count:,} chunks"
        record(Figure("engine", name, p50, "ms", higher_is_better=False, note=f"p95 {p95:.2f} ms"))
    embedder = engine.embedder()
    raw_samples, hybrid_samples = [], []
    for q in questions:
        vector = embedder.embed([q], "query")[0]
        terms = analyze(q)

        def raw(vector: Any = vector, terms: list[str] = terms) -> None:
            engine.dense.search(vector, 100)
            engine.store.index.lexical(terms, 100)

        raw_samples.append(_timed(raw, 1)[0])
        hybrid = Query(q, k=10, mode="hybrid")
        hybrid_samples.append(_timed(partial(retrieve, engine, hybrid, context), 1)[0])
    record(
        Figure(
            "engine",
            f"retrieve hybrid p50 against its raw index calls, {count:,} chunks",
            statistics.median(hybrid_samples),
            "ms",
            "the raw lexical + dense index calls it makes",
            statistics.median(raw_samples),
            higher_is_better=False,
            target=1.5,
        )
    )
    _filtered_recall(engine, embedder, questions, count)
    _rerank_retrieve(engine, minilm, questions, count)
    engine.close()
    record(
        Figure(
            "engine",
            f"resident memory of a server process holding {count:,} chunks",
            _resident_after_open(folder / f"h{count}"),
            "MB",
            higher_is_better=False,
            note=f"vectors alone: {count * 384 * 4 / 2**20:,.0f} MB",
        )
    )


def _filtered_recall(engine: Engine, embedder: Any, questions: list[str], count: int) -> None:
    keys, matrix, _, removed, _ = engine.store.vectors()
    keys, matrix = keys[removed == 0], matrix[removed == 0]
    for label, raw_filter in (
        ("0.1%", {"field": "bucket", "op": "eq", "value": 7}),
        ("1%", {"field": "bucket", "op": "lt", "value": 10}),
        ("10%", {"field": "bucket", "op": "lt", "value": 100}),
        ("50%", {"field": "bucket", "op": "lt", "value": 500}),
    ):
        tree = parse_filter(raw_filter, {"bucket": "int"}, OPERATORS)
        allowed = engine.store.index.filtered_keys(tree)
        mask = np.isin(keys, allowed)
        recalls = []
        for q in questions[:50]:
            vector = embedder.embed([q], "query")[0]
            found = [key for key, _ in engine.dense.search(vector, 10, tree)]
            scores = matrix[mask] @ vector
            best = np.argsort(-scores)[:10]
            # A hit tied with the 10th (to float32's rounding: the two sides sum the
            # product in different orders) is as right as the row argsort chose.
            score_of = dict(zip(keys[mask].tolist(), scores.tolist(), strict=True))
            tenth = float(scores[best[-1]]) - 1e-6 if len(best) else 0.0
            right = sum(1 for key in found if score_of.get(key, -np.inf) >= tenth)
            recalls.append(right / max(1, len(best)))
        record(
            Figure(
                "engine",
                f"filtered dense recall@10, {label} selectivity, {count:,} chunks",
                statistics.mean(recalls),
                "recall",
                "exact search (recall 1.0 by definition)",
                1.0,
                target=1.0,
            )
        )


def _rerank(folder: Path, minilm: Any) -> None:
    """Rerank cost (issue 4): the MaxSim reranker over MiniLM token vectors."""
    from rcpkit.engine.rerank import LateInteractionReranker

    reranker = LateInteractionReranker(minilm)
    passages = _texts(100, seed=5, words=120)
    for top_n in (20, 50, 100):
        score = partial(reranker.score, "w1 w2 w3 w5 w8", passages[:top_n])
        cold = _timed(score, 1)[0]
        warm = _timed(score, 1)[0]
        record(
            Figure(
                "engine",
                f"rerank top {top_n} cold (MaxSim, MiniLM, 120-word passages)",
                cold,
                "ms",
                higher_is_better=False,
                note=f"warm (cached token matrices) {warm:.0f} ms; "
                f"{top_n / cold * 1000:.0f} pairs/s cold",
            )
        )


def _rerank_retrieve(engine: Engine, minilm: Any, questions: list[str], count: int) -> None:
    from rcpkit.engine.rerank import LateInteractionReranker

    engine._rerankers["colbert"] = LateInteractionReranker(minilm)
    context = RequestContext(0, "retrieve", {}, deadline=None)
    samples, stages = [], []
    for q in questions[:20]:
        params = Query(q, k=10, mode="hybrid", rerank=Rerank("colbert", top_n=20))
        started = time.perf_counter()
        result = retrieve(engine, params, context)
        samples.append((time.perf_counter() - started) * 1000)
        assert result.usage is not None
        stages.append(result.usage.stages or {})
    p50, p95 = _percentiles(samples)
    where = {name: statistics.median(s.get(name, 0.0) for s in stages) for name in stages[0]}
    split = ", ".join(f"{name} {ms:.1f}" for name, ms in where.items())
    record(
        Figure(
            "engine",
            f"retrieve hybrid + rerank top 20 p50, {count:,} chunks",
            p50,
            "ms",
            higher_is_better=False,
            note=f"p95 {p95:.0f} ms; median ms per stage: {split}",
        )
    )


def _resident_after_open(folder: Path) -> float:
    """RSS (MB) a fresh process gains by opening the index and answering one query."""
    script = (
        "import sys, pathlib\n"
        "def rss():\n"
        "    for l in pathlib.Path('/proc/self/status').read_text().splitlines():\n"
        "        if l.startswith('VmRSS:'): return int(l.split()[1]) / 1024\n"
        "from rcpkit_bench.engine import _engine, retrieve, Query, RequestContext\n"
        "import numpy\n"
        "before = rss()\n"
        "engine = _engine(pathlib.Path(sys.argv[1]), 'hashing:384')\n"
        "retrieve(engine, Query('w1 w2', k=10), RequestContext(0, 'r', {},"
        " deadline=None))\n"
        "print(rss() - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(folder)], capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


# Per scale: corpus sizes, chunks indexed with MiniLM, queries per corpus.
_SCALES: dict[Scale, tuple[list[int], int, int]] = {
    "full": ([10_000, 100_000], 1_000, 200),
    "quick": ([2_000], 200, 50),
    "smoke": ([300], 16, 10),
}


def run(
    scale: Scale = "full",
    store: str | None = None,
    sizes: list[int] | None = None,
    hnsw_up_to: int | None = None,
) -> list[Figure]:
    if sizes:  # issue 15: the index calls against the peer libraries, per corpus size
        from rcpkit_bench.engine_peers import run_peers

        with collecting() as figures:
            run_peers(sizes, _SCALES[scale][2], hnsw_up_to)
        return figures
    sizes, indexed, queries = _SCALES[scale]
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as folder, collecting() as figures:
        minilm = _indexing(Path(folder), indexed)
        _folder_indexing(Path(folder), max(4, indexed // 8))
        _rerank(Path(folder), minilm)
        for size in sizes:
            _retrieval(Path(folder), size, queries, minilm)
        if store is not None:
            _compare_stores(*_STORE_SCALES[scale], store)
    return figures


# --- embedded vs shared store (issue 9) ---------------------------------------------

_STORE_SCALES: dict[Scale, tuple[int, int]] = {
    "full": (100_000, 200),
    "quick": (5_000, 50),
    "smoke": (500, 10),
}


def _compare_stores(count: int, queries: int, store: str) -> None:
    """Index throughput and retrieve p50/p95 per mode: PostgreSQL against the embedded store.

    ``store`` is a ``postgres://`` URL, or ``"postgres"`` for a private server
    started (and removed) for the run. The corpus, queries and embedder
    (``hashing:384``, so the stores and not the model are measured) are the
    same for both.
    """
    from rcpkit.engine.store.postgres.pgserver import start_server

    server = None
    if store == "postgres":
        server = start_server()
        store = server.url()
    try:
        with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as folder:
            embedded = _store_figures(Path(folder) / "sqlite", count, queries, None)
            shared = _store_figures(Path(folder) / "pg", count, queries, store)
            if server is not None:  # a database of its own: only on the private server
                bulk = _deferred_bulk_load(Path(folder) / "bulk", count, server.url)
                record(Figure("engine", f"PostgreSQL deferred-index bulk load, {count:,} chunks",
                              bulk, "chunks/s", "row-by-row HNSW upkeep",
                              shared["index/add throughput (hashing embedder)"][0],
                              note="defer-index, load, then one concurrent HNSW build; "
                              "the build is included"))  # fmt: skip
    finally:
        if server is not None:
            server.stop()
    throughput = "index/add throughput (hashing embedder)"
    record(
        Figure(
            "engine",
            f"PostgreSQL {throughput}, {count:,} chunks",
            shared[throughput][0],
            "chunks/s",
            "embedded SQLite store",
            embedded[throughput][0],
        )
    )
    for name, (p50, p95) in shared.items():
        if name == throughput:
            continue
        record(
            Figure(
                "engine",
                f"PostgreSQL {name} p50, {count:,} chunks",
                p50,
                "ms",
                "embedded SQLite store",
                embedded[name][0],
                higher_is_better=False,
                note=f"p95 {p95:.1f} ms against {embedded[name][1]:.1f} ms",
            )
        )


def deferred_bulk_load(
    folder: Path, count: int, url: str, build_memory_mb: int | None = None
) -> float:
    """chunks/s of ``rcpkit db defer-index``, the same load as row by row, ``db reindex``.

    ``build_memory_mb``: the build's ``hnsw_build_memory_mb`` (the setting's default
    if None); a graph larger than it spills and builds several-fold slower.
    """
    from rcpkit.engine.store.postgres import connect
    from rcpkit.engine.store.postgres.dense import defer_vector_index, rebuild_vector_index

    memory: dict[str, Any] = (
        {} if build_memory_mb is None else {"hnsw_build_memory_mb": build_memory_mb}
    )
    engine = _engine(folder, "hashing:384", None, store=url, **memory)  # types the column
    texts = _texts(count, seed=2)
    started = time.perf_counter()
    with connect(url) as connection:
        defer_vector_index(connection)
    for start in range(0, count, 5000):
        index_documents(engine, _documents(texts[start : start + 5000], start), chunk=False)
    with connect(url) as connection:
        rebuild_vector_index(connection, engine.store.hnsw)  # type: ignore[attr-defined]
    rate = count / (time.perf_counter() - started)
    engine.close()
    return rate


def _deferred_bulk_load(folder: Path, count: int, url: Callable[[str], str]) -> float:
    from rcpkit.engine.store.postgres import connect

    with connect(url("postgres")) as connection:
        connection.execute("CREATE DATABASE rcpkit_bulk")
    return deferred_bulk_load(folder, count, url("rcpkit_bulk"))


def _store_figures(
    folder: Path, count: int, queries: int, store: str | None
) -> dict[str, tuple[float, float]]:
    engine = _engine(folder, "hashing:384", store=store)
    texts = _texts(count, seed=2)
    started = time.perf_counter()
    for start in range(0, count, 5000):
        index_documents(engine, _documents(texts[start : start + 5000], start), chunk=False)
    rate = count / (time.perf_counter() - started)
    figures = {"index/add throughput (hashing embedder)": (rate, rate)}
    questions = [" ".join(text.split()[:6]) for text in _texts(queries, seed=3)]
    context = RequestContext(0, "retrieve", {}, deadline=None)
    bucket = parse_filter(
        {"field": "bucket", "op": "lt", "value": 10}, {"bucket": "int"}, OPERATORS
    )  # 1 % of the corpus
    cases: list[tuple[Any, Any]] = [("dense", None), ("sparse", None), ("hybrid", None)]
    for mode, filter in [*cases, ("dense", bucket)]:
        samples = []
        for q in questions:
            params = Query(q, k=10, mode=mode, filter=filter)
            samples.append(_timed(partial(retrieve, engine, params, context), 1)[0])
        label = f"retrieve {mode}" + (" filtered 1 %" if filter else "")
        figures[label] = _percentiles(samples)
    engine.close()
    return figures
