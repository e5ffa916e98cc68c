"""In-process search p50/p95: ``rcpkit.open`` against Chroma, LanceDB and Qdrant local mode.

    python benchmarks/library_peers.py [CHUNKS]          # default 20000; the issue's: 100000

Issue 47. Real text: ``rcpkit_bench._real_text`` (the shared Cranfield abstracts
cut into 60-word passages, then the prose of this Python's and its packages'
docstrings, then manual pages, documentation and comments installed on the
machine), the first ``CHUNKS`` of them with an LSA direction; a machine with fewer
says so (BenchUnavailable) rather than pad with made-up text. Every
engine gets the same chunks and the same vectors, computed once (rcpkit takes
them as its own vectors), and every query the same precomputed query vector:
the 225 Cranfield queries (the first 25 asked of every engine once to warm it),
each asked of every engine in the same round so a burst of load on this shared
machine hits all of them. Timed: the search call
alone (query embedding excluded everywhere), top 10.

Rows: dense (every engine), sparse (rcpkit BM25, LanceDB full-text), the
default (rcpkit's default pipeline with the query's text and vector, LanceDB
hybrid, the dense-only peers' dense), and the in-process API's overhead: the p50
of ``Index.search`` against the engine call it wraps (``pipeline.retrieve``
with the same ``Query``), same queries, same run.

The vectors (``RCPKIT_PEERS_EMBEDDER``, default ``lsa:384``) are latent semantic
analysis of the chunks themselves: TF-IDF (sublinear tf, words seen in two
chunks or more) projected on its 384 leading singular vectors (a randomized SVD),
the queries projected the same way; dense, correlated vectors of the real texts,
MiniLM's size, in about a minute. MiniLM itself (``minilm``) embedded 2,000 of
these chunks in 86 s on this shared machine under load (71 min for 100k);
``hashing:384`` is rcpkit's hashing embedder. A search call's cost does not
depend on what the vectors mean, but an HNSW graph's does on how they cluster,
which is why the default is not the hashing embedder's near-orthogonal vectors.
Needs rcpkit-bench's ``peers`` extra (chromadb, lancedb, qdrant-client).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import rcpkit
from rcpkit.engine.models import load_embedder
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.library._request import LocalRequest
from rcpkit_bench import _real_text

CRANFIELD = Path("/work/shared/datasets/cranfield")
K = 10
WARM = 25  # queries asked of every side before the timed round
# The vectors of one set of chunks, kept: the LSA of 100k chunks is minutes under load.
CACHE = Path(tempfile.gettempdir()) / "rcpkit-library-peers"
# The default search through the API, and the engine call it wraps, same Query.
OVERHEAD = ("Index.search", "pipeline.retrieve")


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    queries = [json.loads(line)["text"] for line in (CRANFIELD / "queries.jsonl").open()]
    started = time.perf_counter()
    kind = os.environ.get("RCPKIT_PEERS_EMBEDDER", "lsa:384")
    texts, vectors, asked = _cached(size, kind, queries)
    # A chunk none of whose words is in two chunks has no LSA direction: every engine
    # is given the same chunks, so it is left out of all (rcpkit refuses a zero vector).
    placed = np.linalg.norm(vectors, axis=1) > 0
    texts, vectors = [t for t, kept in zip(texts, placed, strict=True) if kept], vectors[placed]
    texts, vectors = texts[:size], vectors[:size]
    aimed = np.linalg.norm(asked, axis=1) > 0
    queries, asked = [q for q, kept in zip(queries, aimed, strict=True) if kept], asked[aimed]
    left = f"{int((~placed).sum())} chunks, {int((~aimed).sum())} queries"
    print(f"left out without a direction: {left}")
    print(f"{len(texts)} chunks, {len(queries)} queries, {kind} vectors", end=" ")
    print(f"({time.perf_counter() - started:.0f} s)", flush=True)
    with tempfile.TemporaryDirectory(prefix="rcpkit-peers-") as folder:
        ids = [f"c{n}" for n in range(len(texts))]
        started = time.perf_counter()
        ours = _rcpkit(Path(folder) / "rcpkit", ids, texts, vectors)
        print(f"rcpkit indexed in {time.perf_counter() - started:.0f} s", flush=True)
        # The overhead first, alone: no peer's worker threads are alive yet.
        overhead = _timed({name: ours.pop(name) for name in OVERHEAD}, queries, asked)
        started = time.perf_counter()
        sides = {**ours, **_peers(Path(folder), ids, texts, vectors)}
        print(f"the peers indexed in {time.perf_counter() - started:.0f} s", flush=True)
        timings = _timed(sides, queries, asked)
    for name, values in timings.items():
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"{name:<34} p50 {statistics.median(values):8.2f} ms  p95 {p95:8.2f} ms")
    api, engine = (statistics.median(overhead[name]) for name in OVERHEAD)
    print(f"default search p50: Index.search {api:.2f} ms, pipeline.retrieve {engine:.2f} ms")
    print(f"API overhead over the engine call: {api / engine:.3f}x")


def _timed(sides: dict[str, Search], queries: list[str], asked: Any) -> dict[str, list[float]]:
    """Milliseconds per search call, per side; a warm-up of WARM queries first."""
    timings: dict[str, list[float]] = {name: [] for name in sides}
    for question, vector in zip(queries[:WARM], asked[:WARM], strict=True):
        for search in sides.values():
            search(question, vector)  # warm: the first calls of each pay its caches
    names = list(sides)
    for turn, (question, vector) in enumerate(zip(queries, asked, strict=True)):
        # Every side in one round, in an order that turns, so neither a burst of load
        # nor what the previous call left in a cache favours one side.
        shift = turn % len(names)
        for name in names[shift:] + names[:shift]:
            begun = time.perf_counter()
            sides[name](question, vector)
            timings[name].append((time.perf_counter() - begun) * 1000)
    return timings


def _cached(size: int, kind: str, queries: list[str]) -> tuple[list[str], Any, Any]:
    """(chunks, their vectors, the queries' vectors); the vectors from CACHE or made there."""
    # A margin over size: the chunks without an LSA direction are left out (main).
    texts = _real_text.chunks(size + size // 100)
    # Keyed by the chunks themselves: the vectors of other text are never reused.
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]
    folder = CACHE / f"{size}-{kind.replace(':', '-')}-{digest}"
    if (folder / "asked.npy").exists():
        return texts, np.load(folder / "vectors.npy"), np.load(folder / "asked.npy")
    vectors, asked = _vectors(kind, texts, queries)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", vectors)
    np.save(folder / "asked.npy", asked)  # last: its presence says the rest is whole
    return texts, vectors, asked


def _vectors(kind: str, texts: list[str], queries: list[str]) -> tuple[Any, Any]:
    """(chunk vectors, query vectors): ``lsa:D`` or an rcpkit embedder spec."""
    if kind.startswith("lsa:"):
        return _lsa(texts, queries, int(kind.removeprefix("lsa:")))
    embedder = load_embedder(kind, threads=2)
    vectors = np.vstack([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    return vectors, embedder.embed(queries, "query")


def _lsa(texts: list[str], queries: list[str], dimension: int) -> tuple[Any, Any]:
    """Latent semantic analysis: TF-IDF of the chunks on its leading singular vectors."""
    from scipy import sparse

    words = [re.findall(r"[a-z]{2,}", text.lower()) for text in texts]
    seen: dict[str, int] = {}
    for chunk in words:
        for word in set(chunk):
            seen[word] = seen.get(word, 0) + 1
    vocabulary = {word: n for n, word in enumerate(w for w, df in seen.items() if df >= 2)}
    idf = np.log(len(texts) / np.array([seen[w] for w in vocabulary], dtype=np.float64)) + 1.0

    def tfidf(chunks: list[list[str]]) -> Any:
        rows, columns, values = [], [], []
        for row, chunk in enumerate(chunks):
            counts: dict[int, int] = {}
            for word in chunk:
                if word in vocabulary:
                    counts[vocabulary[word]] = counts.get(vocabulary[word], 0) + 1
            for column, count in counts.items():
                rows.append(row)
                columns.append(column)
                values.append((1.0 + np.log(count)) * idf[column])
        shape = (len(chunks), len(vocabulary))
        matrix = sparse.csr_matrix((values, (rows, columns)), shape=shape)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1))).ravel()
        return sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ matrix

    corpus = tfidf(words)
    # A randomized SVD (Halko et al.): the range of corpus @ noise, two power iterations.
    noise = np.random.default_rng(47).standard_normal((len(vocabulary), dimension + 16))
    basis, _ = np.linalg.qr(corpus @ noise)
    for _ in range(2):
        basis, _ = np.linalg.qr(corpus @ (corpus.T @ basis))
    _, _, right = np.linalg.svd((corpus.T @ basis).T, full_matrices=False)
    axes = right[:dimension].T  # vocabulary x dimension

    def project(matrix: Any) -> Any:
        dense = np.asarray(matrix @ axes, dtype=np.float32)
        return dense / np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12)

    asked = [re.findall(r"[a-z]{2,}", query.lower()) for query in queries]
    return project(corpus), project(tfidf(asked))


Search = Callable[[str, Any], Any]


def _peers(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    sides: dict[str, Search] = {}
    sides.update(_chroma(folder / "chroma", ids, texts, vectors))
    sides.update(_lancedb(folder / "lance", ids, texts, vectors))
    sides.update(_qdrant(folder / "qdrant", ids, vectors))
    return sides


def _rcpkit(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    index = rcpkit.open(folder, create=True, vectors=vectors.shape[1])
    for start in range(0, len(ids), 4000):
        part = slice(start, start + 4000)
        documents = [{"id": i, "text": t} for i, t in zip(ids[part], texts[part], strict=True)]
        index.add(documents, vectors=vectors[part])
    engine = index._engine

    def engine_call(question: str, vector: Any) -> Any:
        own = tuple(float(value) for value in vector)
        return retrieve(engine, Query(question, k=K, vector=own), LocalRequest())

    return {
        "rcpkit dense": lambda q, v: index.search(vector=v, k=K),
        "rcpkit sparse": lambda q, v: index.search(q, mode="sparse", k=K),
        "rcpkit default": lambda q, v: index.search(q, vector=v, k=K),
        OVERHEAD[0]: lambda q, v: index.search(q, vector=v, k=K),
        OVERHEAD[1]: engine_call,
    }


def _chroma(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    import chromadb

    client = chromadb.PersistentClient(path=str(folder))
    collection = client.create_collection("chunks", metadata={"hnsw:space": "cosine"})
    step = client.get_max_batch_size()
    for start in range(0, len(ids), step):
        part = slice(start, start + step)
        collection.add(ids=ids[part], documents=texts[part], embeddings=vectors[part].tolist())
    return {
        "chroma dense (HNSW)": lambda q, v: collection.query(
            query_embeddings=[v.tolist()], n_results=K
        )
    }


def _lancedb(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    db = lancedb.connect(str(folder))
    rows = pa.table(
        {
            "id": ids,
            "text": texts,
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.astype(np.float32).ravel()), vectors.shape[1]
            ),
        }
    )
    table = db.create_table("chunks", rows)
    table.create_index("text", config=FTS())
    return {
        "lancedb dense (exact)": lambda q, v: table.search(v).metric("cosine").limit(K).to_list(),
        "lancedb sparse (FTS)": lambda q, v: table.search(q, query_type="fts").limit(K).to_list(),
        "lancedb hybrid": lambda q, v: (
            table.search(query_type="hybrid").vector(v).text(q).limit(K).to_list()
        ),
    }


def _qdrant(folder: Path, ids: list[str], vectors: Any) -> dict[str, Search]:
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    client.create_collection(
        "chunks",
        vectors_config=models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE),
    )
    for start in range(0, len(ids), 2000):
        points = [
            models.PointStruct(id=n, vector=vectors[n].tolist(), payload={"id": ids[n]})
            for n in range(start, min(start + 2000, len(ids)))
        ]
        client.upsert("chunks", points)
    return {
        "qdrant local dense (exact)": lambda q, v: client.query_points(
            "chunks", query=v.tolist(), limit=K
        )
    }


if __name__ == "__main__":
    main()
