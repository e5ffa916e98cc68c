"""In-process search p50: ``rcpkit.open`` against Chroma, LanceDB and Qdrant local mode.

    python benchmarks/library_peers.py [CHUNKS]          # default 20000

Issue 47. Real text: the shared Cranfield abstracts cut into 60-word passages,
then the docstrings of this Python's standard library (paragraphs of 20+
words), until ``CHUNKS``. Every engine gets the same chunks and the same
vectors, computed once (rcpkit takes them as its own vectors), and every query
the same precomputed query vector: the 225 Cranfield
queries, each asked of every engine in the same round so a burst of load on
this shared machine hits all of them. Timed: the search call alone (query
embedding excluded everywhere), top 10.

Rows: dense (every engine), sparse (rcpkit BM25, LanceDB full-text), the
default (rcpkit's default pipeline with the query's text and vector, LanceDB
hybrid, the dense-only peers' dense), and the in-process API's overhead: the p50
of ``Index.search`` against the engine call it wraps (``pipeline.retrieve``
with the same ``Query``), same queries, same run.

The vectors are rcpkit's hashing embedder's (384 dimensions, MiniLM's size):
a search call's cost does not depend on what the vectors mean, and MiniLM
embedded under 10 chunks a second on this shared machine under load
(``RCPKIT_PEERS_EMBEDDER=minilm`` uses it). Needs rcpkit-bench's ``peers``
extra (chromadb, lancedb, qdrant-client).
"""

from __future__ import annotations

import ast
import json
import os
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import rcpkit
from rcpkit.engine.models import load_embedder
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.library._request import LocalRequest

CRANFIELD = Path("/work/shared/datasets/cranfield")
K = 10
WINDOW = 60  # words per Cranfield passage
# The default search through the API, and the engine call it wraps, same Query.
OVERHEAD = ("Index.search", "pipeline.retrieve")


def main() -> None:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    texts = _chunks(size)
    queries = [json.loads(line)["text"] for line in (CRANFIELD / "queries.jsonl").open()]
    embedder = load_embedder(os.environ.get("RCPKIT_PEERS_EMBEDDER", "hashing:384"), threads=2)
    vectors = np.vstack([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    asked = embedder.embed(queries, "query")
    print(f"{len(texts)} chunks, {len(queries)} queries, {embedder.identity} vectors")
    with tempfile.TemporaryDirectory(prefix="rcpkit-peers-") as folder:
        ids = [f"c{n}" for n in range(len(texts))]
        started = time.perf_counter()
        ours = _rcpkit(Path(folder) / "rcpkit", ids, texts, vectors)
        print(f"rcpkit indexed in {time.perf_counter() - started:.0f} s")
        # The overhead first, alone: no peer's worker threads are alive yet.
        overhead = _timed({name: ours.pop(name) for name in OVERHEAD}, queries, asked)
        started = time.perf_counter()
        sides = {**ours, **_peers(Path(folder), ids, texts, vectors)}
        print(f"the peers indexed in {time.perf_counter() - started:.0f} s")
        timings = _timed(sides, queries, asked)
    for name, values in timings.items():
        print(f"{name:<34} p50 {statistics.median(values):8.2f} ms")
    api, engine = (statistics.median(overhead[name]) for name in OVERHEAD)
    print(f"default search p50: Index.search {api:.2f} ms, pipeline.retrieve {engine:.2f} ms")
    print(f"API overhead over the engine call: {api / engine:.3f}x")


def _timed(sides: dict[str, Search], queries: list[str], asked: Any) -> dict[str, list[float]]:
    """Milliseconds per search call, per side; a warm-up round first."""
    timings: dict[str, list[float]] = {name: [] for name in sides}
    for question, vector in zip(queries, asked, strict=True):
        for search in sides.values():
            search(question, vector)  # warm: the first call of each pays its caches
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


def _chunks(size: int) -> list[str]:
    found: list[str] = []
    seen: set[str] = set()
    for text in _passages():
        if text not in seen:
            seen.add(text)
            found.append(text)
            if len(found) == size:
                break
    return found


def _passages() -> Iterator[str]:
    for line in (CRANFIELD / "corpus.jsonl").open():
        words = json.loads(line)["text"].split()
        for start in range(0, len(words), WINDOW):
            if len(words[start : start + WINDOW]) >= 20:
                yield " ".join(words[start : start + WINDOW])
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef | ast.Module):
                for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
                    if len(paragraph.split()) >= 20:
                        yield " ".join(paragraph.split())


Search = Callable[[str, Any], Any]


def _peers(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    sides: dict[str, Search] = {}
    sides.update(_chroma(folder / "chroma", ids, texts, vectors))
    sides.update(_lancedb(folder / "lance", ids, texts, vectors))
    sides.update(_qdrant(folder / "qdrant", ids, vectors))
    return sides


def _rcpkit(folder: Path, ids: list[str], texts: list[str], vectors: Any) -> dict[str, Search]:
    index = rcpkit.open(folder, create=True, vectors=f"minilm:{vectors.shape[1]}")
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
