"""Shards (issue 32): one engine on 1, 2, 3 PostgreSQL shards against one engine on one database.

One synthetic corpus (``hashing:384``: the stores are measured, not a model)
is indexed into one PostgreSQL database (the baseline, measured in the same
run) and into registries of 1, 2 and 3 shards, each shard its own private
PostgreSQL server on loopback. Per layout: load throughput (chunks/s) and
retrieve p50/p95 per mode, each a ratio to the single database's figure. Each
answer of a sharded layout is also checked against the single database's
(same scores and ids in the top 10, up to the order of equal scores), so a
faster wrong answer cannot pass.

On a machine whose shards share its cores the ratios show the coordination's
cost (statistics gathered, S lists merged, S databases asked), not a speed-up:
shards spread storage and write load over machines.

    nice -n 5 timeout 3600 python -P benchmarks/shards.py --chunks 20000 --queries 100
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.query import Query
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.store.postgres import connect
from rcpkit.engine.store.postgres.pgserver import PostgresServer, start_server
from rcpkit.server.context import RequestContext
from rcpkit_bench._synthetic import _documents, _engine, _percentiles, _texts

EMBEDDER = "hashing:384"
MODES = ("sparse", "dense", "hybrid")


def load(engine: Engine, count: int) -> float:
    """Index the corpus in batches of 2,000; chunks per second."""
    texts = _texts(count, seed=2)
    started = time.perf_counter()
    for start in range(0, count, 2000):
        index_documents(engine, _documents(texts[start : start + 2000], start), chunk=False)
    return count / (time.perf_counter() - started)


def answers(engine: Engine, queries: list[str]) -> dict[str, Any]:
    """p50/p95 (ms) per mode, and each query's top-10 ids."""
    context = RequestContext(0, "retrieve", {}, deadline=None)
    figures: dict[str, Any] = {}
    for mode in MODES:
        for query in queries[:5]:  # warm: the shards' read sides load on first use
            retrieve(engine, Query(query, k=10, mode=mode), context)
        samples, tops = [], []
        for query in queries:
            started = time.perf_counter()
            result = retrieve(engine, Query(query, k=10, mode=mode), context)
            samples.append((time.perf_counter() - started) * 1000)
            tops.append([(str(hit.id), hit.score) for hit in result.hits])
        figures[mode] = {"p50/p95 ms": _percentiles(samples), "tops": tops}
    return figures


def same(ours: list[tuple[str, float]], theirs: list[tuple[str, float]]) -> bool:
    """One ranking: the same scores (1e-6) and ids, up to the order of equal scores."""
    if len(ours) != len(theirs) or any(
        abs(a[1] - b[1]) > 1e-6 for a, b in zip(ours, theirs, strict=True)
    ):
        return False
    last = theirs[-1][1] if theirs else 0.0
    above = {doc for doc, score in ours if score - last > 1e-6}
    return above == {doc for doc, score in theirs if score - last > 1e-6}


def database(server: PostgresServer, name: str) -> str:
    with connect(server.url()) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return server.url(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--shards", default="1,2,3")
    args = parser.parse_args()
    layouts = [int(n) for n in args.shards.split(",")]
    queries = [" ".join(text.split()[:6]) for text in _texts(args.queries, seed=3)]
    servers = [start_server() for _ in range(max(layouts))]
    report: dict[str, Any] = {"chunks": args.chunks, "queries": args.queries}
    try:
        with tempfile.TemporaryDirectory() as temporary:
            folder = Path(temporary)
            single = _engine(folder / "single", EMBEDDER, store=database(servers[0], "single"))
            rate = load(single, args.chunks)
            baseline = answers(single, queries)
            single.close()
            report["one database"] = {"chunks/s": rate, **_times(baseline)}
            print("# one database:", json.dumps(report["one database"]), flush=True)
            for count in layouts:
                registry = folder / f"shards{count}.toml"
                registry.write_text("".join(
                    f'[[shard]]\nname = "s{n}"\nurl = "{database(servers[n], f"layout{count}")}"\n'
                    for n in range(count)
                ))  # fmt: skip
                engine = _engine(folder / f"sharded{count}", EMBEDDER, store=str(registry))
                shard_rate = load(engine, args.chunks)
                figures = answers(engine, queries)
                engine.close()
                row: dict[str, Any] = {
                    "chunks/s": shard_rate,
                    "load ratio": shard_rate / rate,
                    **_times(figures),
                }
                for mode in MODES:
                    ours, theirs = figures[mode], baseline[mode]
                    row[f"{mode} p50 ratio"] = ours["p50/p95 ms"][0] / theirs["p50/p95 ms"][0]
                    pairs = zip(ours["tops"], theirs["tops"], strict=True)
                    row[f"{mode} same top 10"] = sum(same(a, b) for a, b in pairs)
                report[f"{count} shards"] = row
                print(f"# {count} shards:", json.dumps(row), flush=True)
    finally:
        for server in servers:
            server.stop()
    print(json.dumps(report, indent=2))


def _times(figures: dict[str, Any]) -> dict[str, Any]:
    return {f"{mode} p50/p95 ms": figures[mode]["p50/p95 ms"] for mode in MODES}


if __name__ == "__main__":
    main()
