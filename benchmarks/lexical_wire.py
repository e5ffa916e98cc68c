"""Lexical retrieve over the wire against tantivy in-process + a ping round trip (issue 31).

One run, one synthetic corpus (the engine suite's Zipf words, cached):
- ``rcpkit serve`` over stdio, driven by a raw NDJSON pipe (no client library
  cost): ``retrieve`` ``mode: sparse`` of short 2-4 term queries, and ``ping``;
- tantivy (the ``bench`` extra) in-process over the same texts, BM25 top-10;
- the engine in-process (``store.lexical``, then the whole ``retrieve``), to
  show where the time over the wire goes: search, the pipeline around it,
  and the transport (codec + pipe).

Target: rcpkit over stdio <= 2 x (tantivy + ping round trip).

    python benchmarks/lexical_wire.py [--size 200000] [--queries 300] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.text.analysis import analyze
from rcpkit.server.context import RequestContext
from rcpkit_bench._synthetic import _documents, _engine, _texts

CACHE = Path(os.environ.get("RCPKIT_BENCH_CACHE", Path.home() / ".cache" / "rcpkit-bench"))
EMBEDDER = "hashing:64"  # sparse retrieve never embeds; the vectors only fill the index


def build(size: int) -> Path:
    folder = CACHE / f"synthetic-{size}"
    done = folder / "built"
    if done.exists():
        return folder
    engine = _engine(folder, EMBEDDER)
    texts = _texts(size, seed=2)
    for start in range(0, size, 5000):
        index_documents(engine, _documents(texts[start : start + 5000], start), chunk=False)
    engine.close()
    done.write_text(str(size))
    return folder


def warm_files(folder: Path) -> None:
    """Read the index's files once: both engines are then measured from the page cache."""
    for path in folder.iterdir():
        if path.is_file():
            with path.open("rb") as file:
                while file.read(1 << 22):
                    pass


def short_queries(count: int) -> list[str]:
    """2-4 words of a document each: keyword queries that match."""
    rng = random.Random(7)
    queries = []
    for text in _texts(count, seed=3):
        words = text.split()
        queries.append(" ".join(rng.sample(words, rng.randint(2, 4))))
    return queries


def over_stdio(folder: Path, queries: list[str]) -> tuple[list[float], list[float]]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(folder)]
    command += ["--embedder", EMBEDDER, "--read-only"]
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert server.stdin is not None and server.stdout is not None

    def call(number: int, method: str, params: dict[str, object]) -> float:
        line = json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        started = time.perf_counter()
        server.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        server.stdin.flush()  # type: ignore[union-attr]
        answer = json.loads(server.stdout.readline())  # type: ignore[union-attr]
        elapsed = (time.perf_counter() - started) * 1000
        assert "result" in answer, answer
        return elapsed

    try:
        call(0, "initialize", {"protocolVersion": 1, "client": {"name": "bench", "version": "1"}})
        for number, query in enumerate(queries[:30]):  # warm: caches, first mirror load
            call(number + 1, "retrieve", {"query": query, "k": 10, "mode": "sparse"})
        wire, pings = [], []
        for number, query in enumerate(queries):
            wire.append(
                call(1000 + number, "retrieve", {"query": query, "k": 10, "mode": "sparse"})
            )
            pings.append(call(100000 + number, "ping", {}))
    finally:
        server.stdin.close()
        server.wait(60)
    return wire, pings


def tantivy_in_process(size: int, queries: list[str]) -> list[float]:
    import tantivy

    schema_builder = tantivy.SchemaBuilder()
    schema_builder.add_text_field("body", stored=False)
    schema = schema_builder.build()
    with tempfile.TemporaryDirectory() as folder:
        index = tantivy.Index(schema, path=folder)
        writer = index.writer(heap_size=256_000_000)
        for text in _texts(size, seed=2):
            writer.add_document(tantivy.Document(body=text))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()
        samples = []
        for query in queries:
            started = time.perf_counter()
            parsed = index.parse_query(query, ["body"])
            searcher.search(parsed, 10)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def in_process(folder: Path, queries: list[str], profile: bool) -> tuple[list[float], list[float]]:
    engine = _engine(folder, EMBEDDER)
    context = RequestContext(0, "retrieve", {}, deadline=None)
    for query in queries[:30]:
        retrieve(engine, Query(query, k=10, mode="sparse"), context)
    search, whole = [], []
    profiler = cProfile.Profile() if profile else None
    for query in queries:
        started = time.perf_counter()
        engine.store.index.lexical(analyze(query), 10)
        search.append((time.perf_counter() - started) * 1000)
        params = Query(query, k=10, mode="sparse")
        if profiler is not None:
            profiler.enable()
        started = time.perf_counter()
        retrieve(engine, params, context)
        whole.append((time.perf_counter() - started) * 1000)
        if profiler is not None:
            profiler.disable()
    engine.close()
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)
    return search, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--profile", action="store_true", help="cProfile the in-process retrieve")
    args = parser.parse_args()
    folder = build(args.size)
    warm_files(folder)
    queries = short_queries(args.queries)
    search, whole = in_process(folder, queries, args.profile)
    wire, pings = over_stdio(folder, queries)
    peer = tantivy_in_process(args.size, queries)
    p50 = statistics.median
    bound = p50(peer) + p50(pings)
    print(f"| at {args.size:,} chunks, {len(queries)} queries of 2-4 words | p50 ms |")
    print("|---|---|")
    print(f"| tantivy in-process | {p50(peer):.2f} |")
    print(f"| ping round trip over stdio | {p50(pings):.3f} |")
    print(f"| rcpkit lexical search in-process (store.lexical) | {p50(search):.2f} |")
    print(f"| rcpkit retrieve in-process (the whole pipeline) | {p50(whole):.2f} |")
    print(f"| rcpkit retrieve over stdio | {p50(wire):.2f} |")
    print(f"| **over stdio / (tantivy + ping)** | **{p50(wire) / bound:.2f}x** (target <= 2x) |")


if __name__ == "__main__":
    main()
