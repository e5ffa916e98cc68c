"""``rcpkit bench shards``: one engine on 1, 2, 3 PostgreSQL shards against one database (issue 32).

One synthetic corpus (``hashing:384``: the stores are measured, not a model)
is indexed into one PostgreSQL database (the baseline, measured in the same
run) and into registries of 1, 2 and 3 shards, each shard its own private
PostgreSQL server on loopback. Per layout: load throughput (chunks/s) and
retrieve p50/p95 per mode, each a ratio to the single database's figure, and
how many answers equal the single database's (same scores and ids in the top
10, up to the order of equal scores), so a faster wrong answer cannot pass.

On a machine whose shards share its cores the ratios show the coordination's
cost (statistics gathered, S lists merged, S databases asked), not a speed-up:
shards spread storage and write load over machines. The three shards are read
a second time with ``lexical = "database"`` (each shard ranks BM25 in SQL, the
server holds no postings): what holding nothing in memory costs per query.

    rcpkit bench shards            # 300,000 chunks, 100 queries per mode
    rcpkit bench shards --quick    # 20,000 chunks
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rcpkit_bench._synthetic import _documents, _engine, _texts
from rcpkit_bench.report import Figure, Scale

__all__ = ["run"]

Mode = Literal["sparse", "dense", "hybrid"]
EMBEDDER = "hashing:384"
MODES: tuple[Mode, ...] = ("sparse", "dense", "hybrid")
LAYOUTS = (1, 2, 3)


@dataclass(frozen=True)
class Plan:
    chunks: int
    queries: int


PLANS: dict[Scale, Plan] = {
    "full": Plan(chunks=300_000, queries=100),
    "quick": Plan(chunks=20_000, queries=50),
    "smoke": Plan(chunks=1_000, queries=10),
}

Top = list[tuple[str, float]]


def _load(engine: Any, count: int) -> float:
    """Index the corpus in batches of 2,000; chunks per second."""
    from rcpkit.engine.ingest.indexer import index_documents

    texts = _texts(count, seed=2)
    started = time.perf_counter()
    for start in range(0, count, 2000):
        index_documents(engine, _documents(texts[start : start + 2000], start), chunk=False)
    return count / (time.perf_counter() - started)


def _answers(engine: Any, queries: list[str]) -> dict[Mode, tuple[list[float], list[Top]]]:
    """Per mode: each query's latency (ms) and its top 10 (id, score)."""
    from rcpkit.engine.query import Query
    from rcpkit.engine.retrieve.pipeline import retrieve
    from rcpkit.server.context import RequestContext

    context = RequestContext(0, "retrieve", {}, deadline=None)
    answers = {}
    for mode in MODES:
        for query in queries[:5]:  # warm: the shards' read sides load on first use
            retrieve(engine, Query(query, k=10, mode=mode), context)
        samples, tops = [], []
        for query in queries:
            started = time.perf_counter()
            result = retrieve(engine, Query(query, k=10, mode=mode), context)
            samples.append((time.perf_counter() - started) * 1000)
            tops.append([(str(hit.id), hit.score) for hit in result.hits])
        answers[mode] = (samples, tops)
    return answers


def same(ours: Top, theirs: Top) -> bool:
    """One ranking: the same scores (1e-6) and ids, up to the order of equal scores."""
    if len(ours) != len(theirs) or any(
        abs(a[1] - b[1]) > 1e-6 for a, b in zip(ours, theirs, strict=True)
    ):
        return False
    last = theirs[-1][1] if theirs else 0.0
    above = {doc for doc, score in ours if score - last > 1e-6}
    return above == {doc for doc, score in theirs if score - last > 1e-6}


def _percentiles(samples: list[float]) -> tuple[float, float]:
    if len(samples) < 2:
        return samples[0], samples[0]
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94]


def _database(server: Any, name: str) -> str:
    from rcpkit.engine.store.postgres import connect

    with connect(server.url()) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    return str(server.url(name))


def run(scale: Scale) -> list[Figure]:
    """Every layout against one database, as report rows."""
    from rcpkit.engine.store.postgres.pgserver import start_server

    plan = PLANS[scale]
    queries = [" ".join(text.split()[:6]) for text in _texts(plan.queries, seed=3)]
    servers = [start_server() for _ in range(max(LAYOUTS))]
    figures: list[Figure] = []
    try:
        with tempfile.TemporaryDirectory(prefix="rcpkit-shards-") as temporary:
            folder = Path(temporary)
            single = _engine(folder / "single", EMBEDDER, store=_database(servers[0], "single"))
            try:
                rate = _load(single, plan.chunks)
                baseline = _answers(single, queries)
            finally:
                single.close()
            for count in LAYOUTS:
                urls = [_database(servers[n], f"layout{count}") for n in range(count)]
                engine = _engine(
                    folder / f"sharded{count}", EMBEDDER, store=str(_registry(folder, urls))
                )
                try:
                    shard_rate = _load(engine, plan.chunks)
                    answers = _answers(engine, queries)
                finally:
                    engine.close()
                layout = f"{count} shard{'s' if count > 1 else ''}, {plan.chunks:,} chunks"
                figures.append(_load_row(layout, shard_rate, rate))
                figures += _rows(layout, answers, baseline)
            # The last layout again, BM25 ranked in each shard's database (nothing held).
            registry = _registry(folder, urls, lexical="database")
            engine = _engine(folder / "database", EMBEDDER, store=str(registry))
            try:
                answers = _answers(engine, queries)
            finally:
                engine.close()
            layout = f"{LAYOUTS[-1]} shards, BM25 in the databases, {plan.chunks:,} chunks"
            figures += _rows(layout, answers, baseline)
    finally:
        for server in servers:
            server.stop()
    return figures


def _registry(folder: Path, urls: list[str], **options: str) -> Path:
    path = folder / f"shards{len(urls)}-{len(options)}.toml"
    settings = "".join(f'{key} = "{value}"\n' for key, value in options.items())
    path.write_text(settings + "".join(
        f'[[shard]]\nname = "s{n}"\nurl = "{url}"\n' for n, url in enumerate(urls)
    ))  # fmt: skip
    return path


def _load_row(layout: str, rate: float, single_rate: float) -> Figure:
    return Figure(
        "shards", f"{layout}: load", rate, "chunks/s", "one PostgreSQL database", single_rate
    )


def _rows(
    layout: str,
    answers: dict[Mode, tuple[list[float], list[Top]]],
    baseline: dict[Mode, tuple[list[float], list[Top]]],
) -> list[Figure]:
    """Per mode: the p50 (p95 in the note) against one database's, and the equal answers."""
    rows: list[Figure] = []
    for mode in MODES:
        samples, tops = answers[mode]
        base_samples, base_tops = baseline[mode]
        p50, p95 = _percentiles(samples)
        base_p50, base_p95 = _percentiles(base_samples)
        agreeing = sum(same(a, b) for a, b in zip(tops, base_tops, strict=True))
        rows.append(
            Figure(
                "shards", f"{layout}: retrieve {mode} p50", p50, "ms",
                "one PostgreSQL database", base_p50, higher_is_better=False,
                note=f"p95 {p95:.1f} ms (one database {base_p95:.1f} ms)",
            )
        )  # fmt: skip
        rows.append(
            Figure(
                "shards", f"{layout}: {mode} top 10 equal to one database's", agreeing,
                f"of {len(tops)} queries",
            )
        )  # fmt: skip
    return rows
