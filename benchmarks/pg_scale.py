"""PostgreSQL scale-out (issue 20): the store beside the embedded one, then 1, 2, 4 servers.

1. One synthetic corpus (``hashing:384``, so the stores and not a model are
   measured) indexed into the embedded store and, by the deferred-index bulk
   load, into a private PostgreSQL; retrieve p50/p95 per mode and the raw
   ``store.lexical`` call, each PostgreSQL figure a ratio to the embedded one.
2. N = 1, 2, 4 ``rcpkit serve --http --store postgres://…`` processes on that
   one database, 64 keep-alive clients spread over them: a reads-only phase
   (retrieve) and a writes-only phase (index/add upserts), calls/s each.
   The peer of each N is N = 1 measured in the same run.

``-P``: this folder's ``http.py`` must not shadow the standard library's ``http``.

    nice -n 5 timeout 2400 python -P benchmarks/pg_scale.py --chunks 100000 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.store.postgres import connect
from rcpkit.engine.store.postgres.pgserver import start_server
from rcpkit.engine.text.analysis import analyze
from rcpkit.server.context import RequestContext
from rcpkit_bench._synthetic import _documents, _engine, _percentiles, _texts
from rcpkit_bench.engine import _timed, deferred_bulk_load
from rcpkit_bench.http import _Child
from rcpkit_bench.loopback import Connection, rpc_body

EMBEDDER = "hashing:384"
CLIENTS = 64


def store_figures(engine: Any, queries: int) -> dict[str, tuple[float, float]]:
    questions = [" ".join(text.split()[:6]) for text in _texts(queries, seed=3)]
    context = RequestContext(0, "retrieve", {}, deadline=None)
    figures = {}
    for mode in ("dense", "sparse", "hybrid"):
        for q in questions[:5]:  # warm: the PostgreSQL store's mirror loads on first use
            retrieve(engine, Query(q, k=10, mode=mode), context)
        samples = [
            _timed(partial(retrieve, engine, Query(q, k=10, mode=mode), context), 1)[0]
            for q in questions
        ]
        figures[f"retrieve {mode}"] = _percentiles(samples)
    terms = [analyze(q) for q in questions]
    samples = [_timed(partial(engine.store.index.lexical, t, 10), 1)[0] for t in terms]
    figures["store.lexical (BM25 top 10)"] = _percentiles(samples)
    if hasattr(engine.store, "lexical_sql"):
        samples = [_timed(partial(engine.store.lexical_sql, t, 10), 1)[0] for t in terms[:50]]
        figures["store.lexical_sql (the SQL statement)"] = _percentiles(samples)
    return figures


def _progress(name: str, value: Any) -> None:
    """One figure as soon as it is measured (a long run that is stopped keeps them)."""
    print(f"# {name}: {json.dumps(value)}", flush=True)


def compare_stores(
    folder: Path, count: int, queries: int, url: str, build_memory_mb: int | None
) -> dict[str, Any]:
    embedded = _engine(folder / "sqlite", EMBEDDER)
    texts = _texts(count, seed=2)
    started = time.perf_counter()
    for start in range(0, count, 5000):
        index_documents(embedded, _documents(texts[start : start + 5000], start), chunk=False)
    embedded_rate = count / (time.perf_counter() - started)
    _progress("embedded index chunks/s", embedded_rate)
    ours = store_figures(embedded, queries)
    _progress("embedded", ours)
    embedded.close()
    bulk_rate = deferred_bulk_load(folder / "pg", count, url, build_memory_mb)
    _progress("postgres deferred bulk load chunks/s", bulk_rate)
    shared = _engine(folder / "pg-read", EMBEDDER, store=url)
    started = time.perf_counter()
    shared.store.index.lexical(["warm"], 1)
    mirror_load = time.perf_counter() - started
    _progress("postgres mirror first load s", mirror_load)
    theirs = store_figures(shared, queries)
    _progress("postgres", theirs)
    shared.close()  # saves the mirror to pg-read/postgres.mirror
    restarted = _engine(folder / "pg-read", EMBEDDER, store=url)
    started = time.perf_counter()
    restarted.store.index.lexical(["warm"], 1)
    cached_load = time.perf_counter() - started
    restarted.close()
    return {
        "embedded index chunks/s": embedded_rate,
        "postgres deferred bulk load chunks/s": bulk_rate,
        "postgres mirror first load s": mirror_load,
        "postgres mirror first load from postgres.mirror s": cached_load,
        "embedded": ours,
        "postgres": theirs,
    }


def server(url: str, folder: Path, cpu: int | None) -> _Child:
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--store", url, "--index", str(folder), "--embedder", EMBEDDER]
    command += ["--allow-unauthenticated-writes"]
    return _Child.spawn(command, env=dict(os.environ))


async def phase(urls: list[str], seconds: float, op: str) -> dict[str, float]:
    done: list[float] = []
    errors = 0
    until = time.perf_counter() + seconds
    words = _texts(200, seed=5)

    async def client(number: int) -> None:
        nonlocal errors
        rng = random.Random(number)
        connection = await Connection(urls[number % len(urls)]).open()
        calls = 0
        try:
            while time.perf_counter() < until:
                calls += 1
                id = f"{number}-{calls}"
                if op == "retrieve":
                    query = " ".join(rng.choice(words).split()[:4])
                    body = rpc_body(id, "retrieve", {"query": query, "k": 10})
                else:
                    document = {"id": f"load-{number}-{calls % 20}", "text": rng.choice(words)}
                    body = rpc_body(id, "index/add", {"documents": [document]})
                started = time.perf_counter()
                answer = await connection.post(op, body)
                if answer.status == 200 and "result" in answer.json():
                    done.append(time.perf_counter() - started)
                else:
                    errors += 1
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    elapsed = time.perf_counter() - started
    done.sort()
    p50 = done[len(done) // 2] * 1000 if done else float("nan")
    return {"calls/s": len(done) / elapsed, "p50 ms": p50, "errors": errors}


def scale_out(folder: Path, url: str, seconds: float, counts: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in counts:
        children = [server(url, folder / f"s{n}-{i}", None) for i in range(n)]
        try:
            urls = [child.url for child in children]
            asyncio.run(phase(urls, 3.0, "retrieve"))  # warm every server's mirror
            reads = asyncio.run(phase(urls, seconds, "retrieve"))
            writes = asyncio.run(phase(urls, seconds, "index/add"))
            out[str(n)] = {"reads": reads, "writes": writes}
            print(n, json.dumps(out[str(n)]), flush=True)
        finally:
            for child in children:
                child.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--servers", default="1,2,4", help="server counts; 'none' skips")
    parser.add_argument(
        "--build-memory-mb", type=int, default=None, help="hnsw_build_memory_mb (1M: 3072)"
    )
    parser.add_argument("--skip-stores", action="store_true")
    args = parser.parse_args()
    postgres = start_server()
    try:
        with connect(postgres.url()) as connection:
            connection.execute("CREATE DATABASE rcpkit_scale")
        url = postgres.url("rcpkit_scale")
        with tempfile.TemporaryDirectory(prefix="rcpkit-pg-scale-") as name:
            folder = Path(name)
            report: dict[str, Any] = {"chunks": args.chunks, "load": os.getloadavg()}
            if not args.skip_stores:
                report["stores"] = compare_stores(
                    folder, args.chunks, args.queries, url, args.build_memory_mb
                )
                print(json.dumps(report["stores"], indent=1), flush=True)
            else:
                deferred_bulk_load(folder / "pg", args.chunks, url, args.build_memory_mb)
            counts = [] if args.servers == "none" else [int(n) for n in args.servers.split(",")]
            report["servers"] = scale_out(folder, url, args.seconds, counts)
            report["load after"] = os.getloadavg()
            print(json.dumps(report, indent=1))
    finally:
        postgres.stop()


if __name__ == "__main__":
    main()
