"""``rcpkit bench engine --sizes …``: the engine's index calls against the libraries users pick.

Issue 15. One synthetic Zipf corpus per size (the generator of ``bench.engine``,
hashing embedder, 384 dimensions), indexed through ``index_documents``; the
peers index the same chunks — tantivy and bm25s the same analysed terms
(rcpkit's analyzer, fed pre-analysed through a whitespace tokenizer), faiss and
usearch the same vectors — and every query is timed on every side in the same
round, so a burst of load on this shared machine hits all of them.

Rows: lexical top-10 p50/p95 and overlap@10 against tantivy and bm25s; dense
exact against faiss flat; the HNSW recall/latency curve of usearch and faiss
(rcpkit's own ANN path is usearch's); filtered dense recall and latency at
0.1/1/10/50 % against the unfiltered search; hybrid against its slower arm;
resident memory and the open-to-first-query time of a fresh process; rcpkit's
ANN calibration (the ef it chose, or exact, and why); 64 HTTP clients against
a real ``rcpkit serve --http`` next to the single-request CPU cost; and the
growth factor of every row between the smallest and the largest size.

``RCPKIT_BENCH_DIR=<folder>`` keeps the indexes there (a re-run re-opens them).

The peers come with rcpkit-bench's ``peers`` extra (``pip install -e './bench[peers]'``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
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
import numpy.typing as npt

from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.index._ann import calibrate
from rcpkit.engine.index._usearch import import_usearch_index
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.query import DEFAULT_FUSION, Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.text.analysis import analyze, analyze_many
from rcpkit.server.context import RequestContext
from rcpkit_bench._synthetic import _documents, _engine, _percentiles, _texts
from rcpkit_bench.report import BenchUnavailable, Figure, record

__all__ = ["run_peers"]

_SELECTIVITIES = (
    ("0.1 %", {"field": "bucket", "op": "eq", "value": 7}),
    ("1 %", {"field": "bucket", "op": "lt", "value": 10}),
    ("10 %", {"field": "bucket", "op": "lt", "value": 100}),
    ("50 %", {"field": "bucket", "op": "lt", "value": 500}),
)


def _ms(function: Callable[[], object]) -> float:
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


def _call(function: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """(milliseconds, result) of one call."""
    started = time.perf_counter()
    result = function(*args)
    return (time.perf_counter() - started) * 1000, result


def _recall(found: list[int], keys: npt.NDArray[Any], scores: npt.NDArray[Any]) -> float:
    """Tie-aware recall@10: a hit counts if its exact score reaches the 10th best's.

    The hashing embedder gives many exactly tied cosines (chunks sharing the query's
    words); two exact searches may order a tie differently by float rounding (1e-7).
    """
    k = min(10, len(scores))
    if k == 0:
        return 1.0
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    wanted = np.asarray(found, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    good = (keys[at] == wanted) & (scores[at] >= kth - 1e-5)
    return float(np.count_nonzero(good)) / k


def _peers() -> tuple[Any, Any, Any, Any]:
    try:
        import bm25s
        import faiss
        import tantivy

        usearch_index = import_usearch_index()
    except ImportError as error:
        raise BenchUnavailable(
            f"{error.name} is missing: pip install -e './bench[peers]'"
        ) from None
    return tantivy, bm25s, faiss, usearch_index


def run_peers(sizes: list[int], queries: int, hnsw_up_to: int | None = None) -> None:
    """Every row at every size; HNSW graphs only at sizes up to ``hnsw_up_to`` (None: all)."""
    _peers()
    results: dict[int, dict[str, float]] = {}
    kept = os.environ.get("RCPKIT_BENCH_DIR")
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-") as scratch:
        folder = Path(kept) if kept else Path(scratch)
        for size in sizes:
            graphs = hnsw_up_to is None or size <= hnsw_up_to
            results[size] = _one_size(folder / f"z{size}", size, queries, graphs)
            if len(results) > 1:  # after every size: a run cut short still has its growth
                _growth(results, min(results), max(results))


def build(folder: Path, size: int, graphs: bool = True) -> Engine:
    """The rcpkit index of ``size`` chunks (re-opened when ``folder`` already holds it).

    ``graphs=False`` raises the engine's ANN threshold past ``size``: it serves exact
    search and never builds an HNSW graph in the background.
    """
    engine = _engine(folder, "hashing:384", config_file=_exact_only(folder, size, graphs))
    if engine.store.count()[1] == size:
        return engine
    texts = _texts(size, seed=2)
    for start in range(0, size, 5000):
        index_documents(engine, _documents(texts[start : start + 5000], start), chunk=False)
    return engine


def _exact_only(folder: Path, size: int, graphs: bool) -> Path | None:
    """A config file raising the ANN threshold past ``size`` (every process of the run reads it)."""
    if graphs:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder.with_name(folder.name + ".exact.toml")
    path.write_text(f"[engine]\ndense_policy = {{ ann_min_size = {size + 1} }}\n")
    return path


def _one_size(folder: Path, size: int, queries: int, graphs: bool) -> dict[str, float]:
    tantivy, bm25s, faiss, usearch = _peers()
    started = time.perf_counter()
    engine = build(folder, size, graphs)
    indexed = time.perf_counter() - started
    dense = engine.dense.index  # type: ignore[attr-defined]
    questions = [" ".join(text.split()[:6]) for text in _texts(queries, seed=3)]
    # Held-out queries for the calibration: the measured ones (seed 3) are never its input.
    tuning = [" ".join(text.split()[:6]) for text in _texts(64, seed=6)]
    tuning_vectors = engine.embedder().embed(tuning, "query").astype(np.float32)
    if size >= dense.policy.ann_min_size:  # let rcpkit build and calibrate its graph
        waited = _call(dense.wait_for_graph, 4 * 3600)[0] / 1000
        for vector in tuning_vectors:  # unfiltered queries: the calibration's input
            dense.search(vector, 10)
        calibrated = _call(dense.wait_for_ann, 3600)[0] / 1000
        _calibration_figure(dense.ann_calibration, f"{size:,} chunks", waited, calibrated)
    keys, matrix, _, removed, _ = engine.store.vectors()
    keys, matrix = keys[removed == 0], np.ascontiguousarray(matrix[removed == 0])
    texts = _texts(size, seed=2)
    out: dict[str, float] = {}
    label = f"{size:,} chunks"
    record(
        Figure(
            "engine",
            f"index {label} (hashing embedder)",
            size / indexed,
            "chunks/s",
            note="index_documents in batches of 5,000",
        )
    )
    out.update(_lexical(engine, tantivy, bm25s, texts, keys, questions, label, folder))
    out.update(_dense(engine, faiss, keys, matrix, questions, label))
    out.update(_hybrid(engine, questions, label))
    config = _exact_only(folder, size, graphs)
    out.update(_process(folder, size, matrix, label, config))
    out.update(_http_load(folder, questions, label, config))
    if not graphs:
        record(Figure("engine", f"HNSW curve, {label}", 0, "", note="not measured "
                      "(--hnsw-up-to): no graph built; rcpkit served exact search"))  # fmt: skip
        engine.close()
        return out
    # Last: building two HNSW graphs is the slowest step by far on two cores.
    vectors = engine.embedder().embed(questions[:50], "query").astype(np.float32)
    graph = dense.ann_graph or _saved_graph(usearch, dense, matrix.shape[1])
    out.update(
        _ann_curve(usearch, faiss, keys, matrix, vectors, label, graph, engine, tuning_vectors)
    )
    engine.close()
    return out


def _saved_graph(usearch: Any, dense: Any, dimension: int) -> Any:
    """rcpkit's saved graph when its calibration chose exact (and so let it go), else None."""
    path = dense._graph.path
    if path is None or not path.exists():
        return None
    settings = dense._graph.settings
    graph = usearch.Index(
        ndim=dimension,
        metric="ip",
        dtype="f32",
        connectivity=settings.connectivity,
        expansion_add=settings.expansion_add,
    )
    graph.load(str(path))
    return graph


def _calibration_figure(calibration: Any, label: str, waited: float, took: float) -> None:
    if calibration is None:
        record(Figure("engine", f"rcpkit ANN calibration, {label}", 0.0, "recall",
                      note=f"no calibration after {took:.0f} s"))  # fmt: skip
        return
    steps = "; ".join(f"ef {ef}: {r:.3f} at {ms:.2f} ms" for ef, r, ms in calibration.curve)
    chose = f"ef {calibration.ef}" if calibration.use_ann else "exact search"
    record(
        Figure(
            "engine",
            f"rcpkit ANN calibration, {label}: chose {chose}",
            calibration.ann_ms,
            "ms",
            "rcpkit exact path, same queries and rounds",
            calibration.exact_ms,
            higher_is_better=False,
            note=f"recall@10 (worse query set) {steps}; graph built in {waited:.0f} s, "
            f"calibrated {took:.0f} s later",
        )
    )


# --- lexical -----------------------------------------------------------------------


def _lexical(
    engine: Engine,
    tantivy: Any,
    bm25s: Any,
    texts: list[str],
    keys: npt.NDArray[Any],
    questions: list[str],
    label: str,
    folder: Path,
) -> dict[str, float]:
    analysed = analyze_many(texts)  # the chunks' terms: the bench corpus has no titles
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", tokenizer_name="whitespace")
    builder.add_integer_field("key", stored=True, fast=True)
    schema = builder.build()
    # Built afresh every run: opening a kept index and adding the corpus again
    # would hold every chunk twice (a re-run with RCPKIT_BENCH_DIR did, overlap 0.51).
    shutil.rmtree(folder / "tantivy", ignore_errors=True)
    (folder / "tantivy").mkdir()
    index = tantivy.Index(schema, path=str(folder / "tantivy"))
    writer = index.writer(heap_size=200_000_000, num_threads=2)
    for key, terms in zip(keys.tolist(), analysed, strict=True):
        writer.add_document(tantivy.Document(body=" ".join(terms), key=key))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index([list(terms) for terms in analysed], show_progress=False)

    def tantivy_top(terms: list[str]) -> list[int]:
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term))
            for term in dict.fromkeys(terms)
        ]
        hits = searcher.search(tantivy.Query.boolean_query(clauses), 10).hits
        return [searcher.doc(address)["key"][0] for _, address in hits]

    def bm25s_top(terms: list[str]) -> list[int]:
        found, _ = retriever.retrieve([terms], k=10, show_progress=False, n_threads=1)
        return [int(keys[i]) for i in found[0]]

    ours, theirs, other = [], [], []
    overlap_tantivy, overlap_bm25s = [], []
    for question in questions:
        terms = analyze(question)
        took, mine = _call(engine.store.index.lexical, terms, 10)
        ours.append(took)
        took, top = _call(tantivy_top, terms)
        theirs.append(took)
        took, alt = _call(bm25s_top, terms)
        other.append(took)
        found = {key for key, _ in mine}
        overlap_tantivy.append(len(found & set(top)) / max(1, len(top)))
        overlap_bm25s.append(len(found & set(alt)) / max(1, len(alt)))
    p50, p95 = _percentiles(ours)
    t50, t95 = _percentiles(theirs)
    b50, _ = _percentiles(other)
    record(
        Figure(
            "engine",
            f"lexical BM25 top-10 p50, {label}",
            p50,
            "ms",
            f"tantivy {_version(tantivy)}",
            t50,
            higher_is_better=False,
            target=2.0,
            note=f"p95 {p95:.2f} vs {t95:.2f} ms; bm25s p50 {b50:.2f} ms",
        )
    )
    record(
        Figure(
            "engine",
            f"lexical BM25 top-10 p95, {label}",
            p95,
            "ms",
            f"tantivy {_version(tantivy)}",
            t95,
            higher_is_better=False,
            target=2.0,
        )
    )
    record(
        Figure(
            "engine",
            f"lexical overlap@10 with tantivy, {label}",
            statistics.mean(overlap_tantivy),
            "overlap",
            note=f"with bm25s: {statistics.mean(overlap_bm25s):.3f} (same analyzer; "
            "both score BM25 over one field, rcpkit FTS5's formula)",
        )
    )
    return {"lexical p50": p50, "lexical p95": p95, "tantivy p50": t50, "bm25s p50": b50}


# --- dense -------------------------------------------------------------------------


def _version(module: Any) -> str:
    """``tantivy v0.27.0, index_format v7`` -> ``0.27.0``."""
    words = str(getattr(module, "__version__", "")).replace(",", " ").split()
    return words[1].lstrip("v") if len(words) > 1 else "?"


def _dense(
    engine: Engine,
    faiss: Any,
    keys: npt.NDArray[Any],
    matrix: npt.NDArray[Any],
    questions: list[str],
    label: str,
) -> dict[str, float]:
    embedder = engine.embedder()
    vectors = embedder.embed(questions, "query").astype(np.float32)
    flat = faiss.IndexFlatIP(matrix.shape[1])
    flat.add(matrix)
    faiss.omp_set_num_threads(1)
    dense = engine.dense.index  # type: ignore[attr-defined]
    quantized = dense.policy.quantized and len(keys) >= dense.policy.quantized_min_size
    if quantized:
        dense.wait_for_quantized(3600)  # int8 codes built: the default exact path from 20k
    ours, theirs, floats, same = [], [], [], []
    for vector in vectors:
        took, found = _call(engine.dense.search, vector, 10)
        ours.append(took)
        theirs.append(_call(flat.search, vector[None, :], 10)[0])
        took, scores = _call(_float_exact, matrix, vector, 10)
        floats.append(took)
        same.append(_recall([key for key, _ in found], keys, scores))
    p50, p95 = _percentiles(ours)
    f50, _ = _percentiles(theirs)
    if quantized:  # issue 31: int8 codes + float rescoring against the float product
        record(
            Figure(
                "engine",
                f"dense exact int8 top-10 p50, {label}",
                p50,
                "ms",
                "float exact (numpy product + top-k)",
                _percentiles(floats)[0],
                higher_is_better=False,
                target=1 / 1.8,
                note=f"recall@10 against float exact {statistics.mean(same):.3f} (tie-aware)",
            )
        )
    record(
        Figure(
            "engine",
            f"dense exact top-10 p50, {label}",
            p50,
            "ms",
            "faiss IndexFlatIP",
            f50,
            higher_is_better=False,
            target=1.2,
            note=f"p95 {p95:.2f} ms",
        )
    )
    out = _filtered(engine, keys, matrix, vectors, label, p50)
    return {"dense exact p50": p50, "faiss flat p50": f50, **out}


def _float_exact(matrix: npt.NDArray[Any], vector: npt.NDArray[Any], k: int) -> Any:
    """Float exact search, the int8 path's baseline: one product and a partial sort.

    Returns every row's score (the recall check reads them); the top ``k`` is taken
    inside the timed call, as a search would.
    """
    scores = matrix @ vector
    np.argpartition(-scores, k)[:k]
    return scores


_EF_CURVE = (64, 256, 1024, 4096)


def faiss_hnsw(faiss: Any, matrix: npt.NDArray[Any]) -> Any:
    """faiss IndexHNSWFlat over ``matrix``: M=32, efConstruction=128, built on 2 threads.

    Searches after it run on one thread, as rcpkit's do.
    """
    hnsw = faiss.IndexHNSWFlat(matrix.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = 128
    faiss.omp_set_num_threads(2)
    hnsw.add(matrix)
    faiss.omp_set_num_threads(1)
    return hnsw


def _ann_curve(
    usearch: Any,
    faiss: Any,
    keys: npt.NDArray[Any],
    matrix: npt.NDArray[Any],
    vectors: npt.NDArray[Any],
    label: str,
    graph: Any,
    engine: Engine,
    tuning: npt.NDArray[Any],
) -> dict[str, float]:
    """Recall@10 and latency of HNSW per ef (usearch, faiss) and of rcpkit's dense search.

    rcpkit answers with whatever its calibration chose (the graph at the calibrated
    ef, or exact search); the peers' p50 at the smallest ef reaching the target is
    the comparison at the same recall.
    """
    exact = [matrix @ v for v in vectors]
    started = time.perf_counter()
    if graph is None:  # below the ANN threshold rcpkit has no graph: build usearch's own
        graph = usearch.Index(
            ndim=matrix.shape[1], metric="ip", dtype="f32", connectivity=32, expansion_add=128
        )
        graph.add(keys, matrix, threads=2)
    built_usearch = time.perf_counter() - started
    started = time.perf_counter()
    hnsw = faiss_hnsw(faiss, matrix)
    built_faiss = time.perf_counter() - started
    dense = engine.dense.index  # type: ignore[attr-defined]
    ours_recall, ours_time = [], []
    for vector, truth in zip(vectors, exact, strict=True):
        took, found = _call(dense.search, vector, 10)
        ours_time.append(took)
        ours_recall.append(_recall([key for key, _ in found], keys, truth))
    mine = (statistics.mean(ours_recall), statistics.median(ours_time))
    curves: dict[str, list[tuple[int, float, float]]] = {"usearch": [], "faiss": []}
    for ef in _EF_CURVE:
        graph.expansion_search = ef
        hnsw.hnsw.efSearch = ef
        recall_u, recall_f, time_u, time_f = [], [], [], []
        for vector, truth in zip(vectors, exact, strict=True):
            took, found = _call(graph.search, vector, 10)
            time_u.append(took)
            recall_u.append(_recall(np.asarray(found.keys).tolist(), keys, truth))
            took, (_, got) = _call(hnsw.search, vector[None, :], 10)
            time_f.append(took)
            recall_f.append(_recall(keys[got[0]].tolist(), keys, truth))
        curves["usearch"].append((ef, statistics.mean(recall_u), statistics.median(time_u)))
        curves["faiss"].append((ef, statistics.mean(recall_f), statistics.median(time_f)))
        record(
            Figure(
                "engine",
                f"HNSW M=32 ef={ef} recall@10, {label}",
                statistics.mean(recall_u),
                "recall",
                "faiss IndexHNSWFlat, same M/ef",
                statistics.mean(recall_f),
                note=f"usearch p50 {statistics.median(time_u):.2f} ms, faiss p50 "
                f"{statistics.median(time_f):.2f} ms; built in {built_usearch:.0f} s "
                f"(usearch), {built_faiss:.0f} s (faiss), 2 threads",
            )
        )
    target = dense.policy.ann_target_recall
    best: list[tuple[float, str]] = []  # (p50 at the target, library)
    for name, steps in curves.items():
        reaching = [ms for _, recall, ms in steps if recall >= target]
        if reaching:
            best.append((min(reaching), name))
    peer = min(best) if best else None
    record(
        Figure(
            "engine",
            f"dense at recall@10 >= {target}, {label}: rcpkit (recall {mine[0]:.3f})",
            mine[1],
            "ms",
            f"fastest HNSW reaching it ({peer[1]})" if peer else "no HNSW ef reached it",
            peer[0] if peer else None,
            higher_is_better=False,
            target=2.0,
            note="peers' smallest ef reaching the target; rcpkit as calibrated",
        )
    )
    if dense.ann_calibration is None:  # below the threshold: what the calibration would pick
        found = calibrate(
            graph, keys, matrix, tuning[:32], lambda q: dense.search(q, 10), dense._graph.settings
        )
        graph.expansion_search = max(found.ef, 1)
        _calibration_figure(found, f"{label} (on the bench's usearch graph)", built_usearch, 0)
    return {"dense as served p50": mine[1]}


def _filtered(
    engine: Engine,
    keys: npt.NDArray[Any],
    matrix: npt.NDArray[Any],
    vectors: npt.NDArray[Any],
    label: str,
    unfiltered: float,
) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, raw in _SELECTIVITIES:
        tree = parse_filter(raw, {"bucket": "int"}, OPERATORS)
        mask = np.isin(keys, engine.store.index.filtered_keys(tree))
        subset, subset_keys = matrix[mask], keys[mask]
        recalls, samples = [], []
        for vector in vectors:
            took, found = _call(engine.dense.search, vector, 10, tree)
            samples.append(took)
            hits = [key for key, _ in found]
            recalls.append(_recall(hits, subset_keys, subset @ vector))
        p50, _ = _percentiles(samples)
        record(
            Figure(
                "engine",
                f"dense filtered {name} p50, {label}",
                p50,
                "ms",
                "unfiltered dense p50",
                unfiltered,
                higher_is_better=False,
                target=2.0,
                note=f"recall@10 {statistics.mean(recalls):.3f} (tie-aware)",
            )
        )
        out[f"filtered {name} p50"] = p50
    return out


# --- hybrid, memory, open ------------------------------------------------------------


def _hybrid(engine: Engine, questions: list[str], label: str) -> dict[str, float]:
    """retrieve per mode; "hybrid" is one pass (the default fusion named explicitly).

    A plain retrieve also runs the lexical feedback pass of issue 16 (``prf.py``):
    its own row, so the arms-versus-fusion target is not mixed with that pass.
    """
    context = RequestContext(0, "retrieve", {}, deadline=None)
    samples: dict[str, list[float]] = {}
    for question in questions:
        modes = {
            "dense": Query(question, k=10, mode="dense"),
            "sparse": Query(question, k=10, mode="sparse"),
            "hybrid": Query(question, k=10, fusion=DEFAULT_FUSION),
            "default": Query(question, k=10),
        }
        for mode, params in modes.items():
            samples.setdefault(mode, []).append(_ms(partial(retrieve, engine, params, context)))
    p50 = {mode: statistics.median(values) for mode, values in samples.items()}
    slower = max(p50["dense"], p50["sparse"])
    record(
        Figure(
            "engine",
            f"retrieve hybrid p50 (one pass), {label}",
            p50["hybrid"],
            "ms",
            "the slower arm's retrieve p50",
            slower,
            higher_is_better=False,
            target=1.2,
            note=f"dense {p50['dense']:.2f} ms, sparse {p50['sparse']:.2f} ms",
        )
    )
    record(
        Figure(
            "engine",
            f"retrieve default p50 (hybrid + lexical feedback pass), {label}",
            p50["default"],
            "ms",
            "one-pass hybrid",
            p50["hybrid"],
            higher_is_better=False,
            note="the second BM25 pass with RM3 terms (issue 16)",
        )
    )
    return {
        "hybrid p50": p50["hybrid"],
        "default p50": p50["default"],
        "retrieve dense p50": p50["dense"],
        "retrieve sparse p50": p50["sparse"],
    }


_PROCESS = """
import json, pathlib, sys, time
def rss():
    for line in pathlib.Path('/proc/self/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
from rcpkit_bench._synthetic import _engine
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.server.context import RequestContext
import numpy
before = rss()
started = time.perf_counter()
config = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
engine = _engine(pathlib.Path(sys.argv[1]), 'hashing:384', config_file=config)
retrieve(engine, Query('w1 w2 w30', k=10),
         RequestContext(0, 'r', {}, deadline=None))
opened = time.perf_counter() - started
postings = engine.store._mirror.snapshot.postings
size = sum(p.nbytes + f.nbytes for pieces in postings._terms.values() for p, f in pieces)
print(json.dumps([rss() - before, opened, size / 2**20]))
"""


def _process(
    folder: Path,
    size: int,
    matrix: npt.NDArray[Any],
    label: str,
    config: Path | None = None,
) -> dict[str, float]:
    import json

    command = [sys.executable, "-c", _PROCESS, str(folder)] + ([str(config)] if config else [])
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    resident, opened, postings = json.loads(done.stdout.strip().splitlines()[-1])
    vectors = matrix.nbytes / 2**20
    raw = vectors + postings
    record(
        Figure(
            "engine",
            f"resident memory of a fresh process, {label}",
            resident,
            "MB",
            "raw vectors + postings",
            raw,
            higher_is_better=False,
            target=1.5,
            note=f"vectors {vectors:.0f}, postings {postings:.0f} MB",
        )
    )
    record(
        Figure(
            "engine",
            f"open the index and answer one query, {label}",
            opened,
            "s",
            higher_is_better=False,
            note="a fresh process, first retrieve",
        )
    )
    return {"resident MB": resident, "open s": opened}


def _growth(results: dict[int, dict[str, float]], small: int, large: int) -> None:
    for name in results[small]:
        if name not in results[large] or not results[small][name] > 0:
            continue
        factor = results[large][name] / results[small][name]
        exponent = np.log(factor) / np.log(large / small)
        record(
            Figure(
                "engine",
                f"growth {small:,} -> {large:,} chunks: {name}",
                factor,
                "x",
                higher_is_better=False,
                note=f"n^{exponent:.2f}; to 1,000,000 at that rate: "
                f"{results[large][name] * (1_000_000 / large) ** exponent:,.4g}",
            )
        )


# --- HTTP load -----------------------------------------------------------------------

_LOAD_CLIENTS = 64
_LOAD_SECONDS = 20.0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _http_load(
    folder: Path, questions: list[str], label: str, config: Path | None = None
) -> dict[str, float]:
    """A real ``rcpkit serve --http`` on the index: one client, then 64, hybrid retrieve.

    The server is pinned to one core (the clients to the other), so the ceiling of
    its throughput is 1 / (CPU per request): the row states both, and the gap is
    what concurrency costs (queueing, GIL hand-offs, the HTTP layer).
    """
    from rcpkit_bench.http import _Child, _raise_file_limit

    _raise_file_limit()
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--index", str(folder), "--embedder", "hashing:384", "--read-only"]
    command += ["--config", str(config)] if config else []
    child = _Child.spawn(command, startup=1800.0)  # the server opens the index first
    try:
        single, loaded = asyncio.run(_drive(child, questions))
    finally:
        child.stop()
    (cpu_single, p50_single), (rate, p50, p95, cpu_loaded, errors) = single, loaded
    ceiling = 1000 / cpu_single
    record(
        Figure(
            "engine",
            f"HTTP retrieve hybrid, {_LOAD_CLIENTS} clients, {label}",
            rate,
            "requests/s",
            "one core's ceiling at the single-request CPU cost",
            ceiling,
            note=f"single request: {cpu_single:.1f} ms CPU, p50 {p50_single:.1f} ms; under "
            f"load: {cpu_loaded:.1f} ms CPU/request, p50 {p50:.0f} ms, p95 {p95:.0f} ms, "
            f"{errors} errors; the server used {rate * cpu_loaded / 10:.0f} % of its one core "
            f"(the rest went to the machine's other work), {_LOAD_SECONDS:.0f} s",
        )
    )
    return {"HTTP 64-client requests/s": rate, "HTTP single-request CPU ms": cpu_single}


async def _drive(
    child: Any, questions: list[str]
) -> tuple[tuple[float, float], tuple[float, float, float, float, int]]:
    from rcpkit_bench.loopback import Connection, rpc_body

    pid = child.process.pid

    def body(number: int) -> bytes:
        params = {"query": questions[number % len(questions)], "k": 10, "mode": "hybrid"}
        return rpc_body(number, "retrieve", params)

    async def call(connection: Connection, number: int) -> bool:
        answer = await connection.post("retrieve", body(number))
        return answer.status == 200 and "result" in answer.json()

    first = await Connection(child.url).open()
    for number in range(5):  # open the engine, warm the caches
        assert await call(first, number), "the server did not answer retrieve"
    samples = []
    before = _cpu_seconds(pid)
    for number in range(50):
        started = time.perf_counter()
        await call(first, number)
        samples.append((time.perf_counter() - started) * 1000)
    cpu_single = (_cpu_seconds(pid) - before) * 1000 / 50
    await first.close()
    latencies: list[float] = []
    errors = 0

    async def client(number: int, until: float) -> None:
        nonlocal errors
        connection = await Connection(child.url).open()
        calls = 0
        try:
            while time.perf_counter() < until:
                started = time.perf_counter()
                ok = await call(connection, number * 1000 + calls)
                calls += 1
                if ok:
                    latencies.append((time.perf_counter() - started) * 1000)
                else:
                    errors += 1
        finally:
            await connection.close()

    before, started = _cpu_seconds(pid), time.perf_counter()
    until = started + _LOAD_SECONDS
    await asyncio.gather(*(client(n, until) for n in range(_LOAD_CLIENTS)))
    elapsed = time.perf_counter() - started
    cpu_loaded = (_cpu_seconds(pid) - before) * 1000 / max(1, len(latencies))
    p50, p95 = _percentiles(latencies)
    single = (cpu_single, statistics.median(samples))
    return single, (len(latencies) / elapsed, p50, p95, cpu_loaded, errors)
