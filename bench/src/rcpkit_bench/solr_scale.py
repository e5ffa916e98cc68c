"""``rcpkit bench solr``: one rcpkit server over a 3-node SolrCloud against the embedded engine.

Issue 48, item 5. The same real-text chunks (``_real_text``: Cranfield passages,
then the prose installed on the machine; past 532,948 of them, the same texts'
windows shifted) go through ``index/add`` to two
real ``rcpkit serve --http`` processes: one over a local SolrCloud collection
(three nodes, one JVM each, three shards, replicationFactor 1: one shard a
node) and one over the embedded store. Both in batches of the same size, both
acknowledged only once durable. The vectors are ``hashing:384`` (MiniLM's
size): the stores are measured, not a model, and MiniLM would embed a few
dozen chunks a second on the 2-core machine.

At each corpus size (ascending; the corpus grows from one to the next):

* ingest rate (chunks/s) of that step, Solr against embedded;
* ``retrieve`` p50 (p95 in the note), sparse, dense and hybrid, over the same
  Cranfield queries, asked of both servers in turns, timed at the client
  (the HTTP exchange included, the same for both);
* the resident memory (RSS) of each server: of the one that ingested the
  step (after its last ``index/add``) and of one started afresh over the
  step's corpus (after the queries). Each phase has its own process, so a
  figure is that phase's own: a writer's RSS is bounded by its batches'
  high-water mark, not by the corpus; the Solr-backed reader holds no corpus,
  so its RSS stays flat as the corpus grows, where the embedded server's grows
  with its postings and vectors.

    rcpkit bench solr                      # 20k and 100k chunks, 50 queries a mode
    rcpkit bench solr --sizes 500k,1M      # the sizes to stop at (at most what is here)
    rcpkit bench solr --smoke              # 300 and 1,000 chunks
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcpkit.engine.store.solr.localcloud import create_collection
from rcpkit_bench import _real_text
from rcpkit_bench.report import Figure, Scale
from rcpkit_bench.solr_cloud import RcpServer, local_cluster

__all__ = ["PLANS", "Plan", "Step", "figures", "measure", "run"]

EMBEDDER = "hashing:384"
NODES = 3
MODES = ("sparse", "dense", "hybrid")
BATCH = 1000  # documents an index/add request (one commit each, on both sides)
SIDES = ("solr", "embedded")


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    queries: int


PLANS: dict[Scale, Plan] = {
    "full": Plan(sizes=(20_000, 100_000), queries=50),
    "quick": Plan(sizes=(5_000, 20_000), queries=20),
    "smoke": Plan(sizes=(300, 1_000), queries=5),
}


@dataclass
class Step:
    """One side at one corpus size: what the step's ingest and queries measured."""

    chunks: int
    ingest_rate: float
    latencies: dict[str, list[float]]
    rss_mib: float  # the reader's, after the queries
    written_mib: float  # the writer's, after the step's ingest


def _ingest(server: RcpServer, texts: list[str], first: int) -> float:
    """``index/add`` of ``texts`` (ids from ``first``) in batches; chunks per second."""
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        documents = [
            {"id": f"c{first + start + n}", "text": text}
            for n, text in enumerate(texts[start : start + BATCH])
        ]
        _result(server, "index/add", {"documents": documents})
    return len(texts) / (time.perf_counter() - started)


def _result(server: RcpServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply, failure = server.call(method, params, timeout=900)
    if reply is None or "result" not in reply:
        raise RuntimeError(f"{method}: {failure or reply}")
    result: dict[str, Any] = reply["result"]
    return result


def _ask(servers: dict[str, RcpServer], questions: list[str]) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per retrieve, per side and mode; both sides in turns, a warm-up first."""
    timings: dict[str, dict[str, list[float]]] = {side: {m: [] for m in MODES} for side in servers}
    for mode in MODES:
        for side in servers:  # warm: first calls pay caches and lazy loads
            for question in questions[:3]:
                _result(servers[side], "retrieve", {"query": question, "k": 10, "mode": mode})
        for turn, question in enumerate(questions):
            order = list(servers) if turn % 2 == 0 else list(reversed(servers))
            for side in order:  # in turns: a burst of load on the machine hits both
                params = {"query": question, "k": 10, "mode": mode}
                started = time.perf_counter()
                _result(servers[side], "retrieve", params)
                timings[side][mode].append((time.perf_counter() - started) * 1000)
    return timings


def measure(
    servers: dict[str, RcpServer],
    texts: list[str],
    plan: Plan,
    start: Callable[[str], RcpServer],
) -> dict[int, dict[str, Step]]:
    """Grow both corpora size by size; at each, ingest then ask (``texts``: the largest).

    Each phase runs in a server of its own (``start``: a fresh one over a side's
    store, stopping the one before), so each RSS is that phase's alone.
    """
    questions = _real_text.queries(plan.queries)
    steps: dict[int, dict[str, Step]] = {}
    done = 0
    for size in plan.sizes:
        _restart(servers, start)
        rates = {side: _ingest(servers[side], texts[done:size], done) for side in servers}
        written = {side: servers[side].rss_mib() for side in servers}
        done = size
        _progress(f"{size:,} chunks ingested: {rates}; writers' RSS {written}")
        _restart(servers, start)
        timings = _ask(servers, questions)
        steps[size] = {
            side: Step(_chunks(servers[side]), rates[side], timings[side],
                       servers[side].rss_mib(), written[side])
            for side in servers
        }  # fmt: skip
        _progress(f"{size:,} chunks: " + _summary(steps[size]))  # a stopped run's figures
    return steps


def _summary(sides: dict[str, Step]) -> str:
    parts = []
    for side, step in sides.items():
        modes = ", ".join(
            "{} p50/p95 {:.0f}/{:.0f} ms".format(mode, *_percentiles(step.latencies[mode]))
            for mode in MODES
        )
        parts.append(f"{side}: {step.chunks:,} held, {modes}, reader RSS {step.rss_mib:.0f} MiB")
    return "; ".join(parts)


def _restart(servers: dict[str, RcpServer], start: Callable[[str], RcpServer]) -> None:
    for side in servers:
        servers[side].stop()
        servers[side] = start(side)


def _chunks(server: RcpServer) -> int:
    return int(_result(server, "x-rcpkit/stats", {}).get("chunks", -1))


def _progress(line: str) -> None:
    print(f"rcpkit bench solr: {line}", file=sys.stderr, flush=True)


def run(scale: Scale, sizes: list[int] | None = None) -> list[Figure]:
    """Both servers at every size of the plan (or ``sizes``), as report rows."""
    plan = PLANS[scale] if not sizes else Plan(tuple(sorted(set(sizes))), PLANS[scale].queries)
    texts = _real_text.chunks(plan.sizes[-1])
    load = _load_average()
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-solr-") as temporary:
        folder = Path(temporary)
        cluster = local_cluster(folder / "cloud", NODES)
        servers: dict[str, RcpServer] = {}
        try:
            create_collection(cluster.http(), "scale", shards=NODES, replicas=1)
            stores = {"solr": cluster.collection_url("scale"), "embedded": None}

            def start(side: str) -> RcpServer:
                return RcpServer(stores[side], folder / f"{side}-index", EMBEDDER)

            servers = {side: start(side) for side in SIDES}
            steps = measure(servers, texts, plan, start)
        finally:
            for server in servers.values():
                server.stop()
            cluster.stop()
    return figures(steps, plan, f"load average {load} → {_load_average()}")


def _load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _percentiles(samples: list[float]) -> tuple[float, float]:
    if len(samples) < 2:
        return samples[0], samples[0]
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94]


def figures(steps: dict[int, dict[str, Step]], plan: Plan, load: str) -> list[Figure]:
    rows: list[Figure] = []
    for size, sides in steps.items():
        solr, embedded = sides["solr"], sides["embedded"]
        label = f"{size:,} chunks"
        note = f"chunks held: Solr {solr.chunks:,}, embedded {embedded.chunks:,}; {load}"
        rows.append(Figure("solr", f"{label}: ingest (index/add, {BATCH} a request)",
                           solr.ingest_rate, "chunks/s", "embedded engine",
                           embedded.ingest_rate, note=note))  # fmt: skip
        for mode in MODES:
            p50, p95 = _percentiles(solr.latencies[mode])
            base50, base95 = _percentiles(embedded.latencies[mode])
            rows.append(Figure("solr", f"{label}: retrieve {mode} p50", p50, "ms",
                               "embedded engine", base50, higher_is_better=False,
                               note=f"p95 {p95:.0f} ms (embedded {base95:.0f} ms),"
                                    f" {len(solr.latencies[mode])} queries"))  # fmt: skip
        rows.append(Figure("solr", f"{label}: RSS of a server started after the ingest,"
                           " after the queries", solr.rss_mib, "MiB", "embedded engine",
                           embedded.rss_mib, higher_is_better=False))  # fmt: skip
        rows.append(Figure("solr", f"{label}: RSS of the server that ingested the step",
                           solr.written_mib, "MiB", "embedded engine", embedded.written_mib,
                           higher_is_better=False))  # fmt: skip
    small, large = steps[plan.sizes[0]], steps[plan.sizes[-1]]
    for side in SIDES:
        rows.append(Figure("solr", f"{side} reader RSS growth, {plan.sizes[0]:,} → "
                           f"{plan.sizes[-1]:,} chunks", large[side].rss_mib, "MiB",
                           f"at {plan.sizes[0]:,}", small[side].rss_mib,
                           higher_is_better=False))  # fmt: skip
    return rows
