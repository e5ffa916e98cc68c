"""The federated benchmark: does a gateway keep the relevance one engine has? (§16)

    rcpkit eval DATASET --federated [--foreign "CMD"] [--unrelated DIR] [--work DIR]

What runs, every part a real process speaking RCP over stdio:

- ``full``: one rcpkit engine holding the whole collection (the reference);
- ``shard-a``/``shard-b``: two rcpkit engines, each holding the half of the
  corpus its document ids hash to (SHA-256 of ``"rcpkit-shard/1:" + id``,
  first byte even → a), so no engine sees the other's documents;
- ``unrelated``: an rcpkit engine over another collection (by default the
  docstrings collection of :mod:`rcpkit.evaluation.docstrings`, generated
  from installed packages, its ids prefixed ``unrelated:``);
- ``foreign`` (``--foreign CMD``): any other RCP server, e.g. the spec
  authors' example server - it returns no ``confidence``;
- ``rcpkit gateway`` over the shards, the unrelated and the foreign engine,
  once per fusion method (a fresh session each, so calibration starts cold).

Every query goes to ``full`` and to each gateway as plain ``retrieve`` with
``k`` only. Reported per half of :mod:`rcpkit.evaluation.split`: nDCG@10,
its ratio to ``full``, and how many of the top 10 came from engines that do
not hold the collection (none of them is relevant: their ids are not in the
qrels). The method to make the gateway's default is the one best on ``dev``;
``heldout`` is what to quote.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, median
from typing import Any

from rcpkit.client import Client
from rcpkit.evaluation.dataset import CorpusDocument, Dataset, load_dataset
from rcpkit.evaluation.harness import document_ids, load_corpus
from rcpkit.evaluation.metrics import PRIMARY, ranked_run, score_run
from rcpkit.evaluation.split import split_of

__all__ = [
    "FederatedEvaluation",
    "MethodRow",
    "evaluate_federated",
    "prepare_engines",
    "render_federated",
    "shard_of",
]

SHARDS = ("shard-a", "shard-b")
UNRELATED_PREFIX = "unrelated:"
_PASS_ENV = ("PYTHONPATH", "RCPKIT_EMBEDDER", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
_HALVES = ("dev", "heldout", "all")
Log = Callable[[str], None]


def shard_of(document_id: str) -> str:
    """The shard a document lives in: a hash of its id only (fixed, qrels-blind)."""
    first = hashlib.sha256(("rcpkit-shard/1:" + document_id).encode("utf-8")).digest()[0]
    return SHARDS[first % 2]


@dataclass(slots=True)
class MethodRow:
    """One run over every query: a single engine or a gateway with one fusion method."""

    key: str
    label: str
    ranking: dict[str, list[str]]
    latency_ms: list[float]
    ndcg: dict[str, float] = field(default_factory=dict)  # half → nDCG@10
    intruders: dict[str, tuple[int, int]] = field(default_factory=dict)  # half → (hits, queries)


@dataclass(slots=True)
class FederatedEvaluation:
    dataset: str
    documents: int
    queries: int
    engines: dict[str, int]  # engine → documents it holds
    foreign: str | None
    single: MethodRow
    methods: list[MethodRow]
    chosen: str  # best nDCG@10 on dev

    def ratio(self, row: MethodRow, half: str) -> float:
        base = self.single.ndcg[half]
        return row.ndcg[half] / base if base > 0 else float("nan")


def _python_serve(index: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--index", str(index), *extra]


def _env_names() -> list[str]:
    import os

    return [n for n in os.environ if n in _PASS_ENV or n.startswith("RCPKIT_")]


def unrelated_collection(work: Path, folder: Path | None, log: Log) -> list[CorpusDocument]:
    """The unrelated engine's documents (a dataset folder's corpus, or the docstrings one)."""
    work.mkdir(parents=True, exist_ok=True)
    if folder is None:
        folder = work / "docstrings"
        if not (folder / "corpus.jsonl").exists():
            from rcpkit.evaluation.docstrings import write_collection

            log(f"federated: generating the docstrings collection into {folder}")
            write_collection(folder)
    documents = load_dataset(folder).corpus
    return [dataclasses.replace(d, id=UNRELATED_PREFIX + d.id) for d in documents]


async def prepare_engines(
    work: Path, dataset: Dataset, unrelated: list[CorpusDocument], log: Log
) -> dict[str, int]:
    """Index ``full``, the shards and ``unrelated`` under ``work`` (kept for the next run)."""
    corpora = {
        "full": dataset.corpus,
        **{s: [d for d in dataset.corpus if shard_of(d.id) == s] for s in SHARDS},
        "unrelated": unrelated,
    }
    sizes: dict[str, int] = {}
    for name, documents in corpora.items():
        folder = work / name
        marker = folder / "loaded.json"
        wanted = {"dataset": dataset.name, "documents": len(documents)}
        sizes[name] = len(documents)
        if marker.exists() and json.loads(marker.read_text()) == wanted:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        log(f"federated: indexing {len(documents)} documents into {name}")
        client = await Client.connect_stdio(
            _python_serve(folder, "--create"),
            pass_env=_env_names(),
            timeout=900.0,
            connect_timeout=120.0,
        )
        try:
            await load_corpus(client, dataclasses.replace(dataset, corpus=list(documents)))
        finally:
            await client.close()
        marker.write_text(json.dumps(wanted))
    return sizes


def write_registry(work: Path, foreign: Sequence[str] | None) -> Path:
    """The gateway's ``rcp.json`` (§16.1): the shards, the unrelated and the foreign engine."""
    engines: list[dict[str, Any]] = [
        {
            "id": name,
            "transport": "stdio",
            "command": _python_serve(work / name),
            "passEnv": _env_names(),
        }
        for name in (*SHARDS, "unrelated")
    ]
    if foreign:
        engines.append({"id": "foreign", "transport": "stdio", "command": list(foreign)})
    path = work / "rcp.json"
    path.write_text(json.dumps({"engines": engines}, indent=1))
    return path


async def _run(
    client: Client, dataset: Dataset, depth: int, concurrency: int
) -> tuple[dict[str, list[str]], list[float]]:
    ranking: dict[str, list[str]] = {}
    latency: dict[str, float] = {}
    gate = asyncio.Semaphore(concurrency)

    async def one(query_id: str, text: str) -> None:
        async with gate:
            started = time.perf_counter()
            result = await client.retrieve(text, k=depth)  # k only: what a user sends
            latency[query_id] = (time.perf_counter() - started) * 1000
            ranking[query_id] = document_ids(result.hits)[:depth]

    async with asyncio.TaskGroup() as group:
        for query_id, text in dataset.queries.items():
            group.create_task(one(query_id, text))
    return {q: ranking[q] for q in dataset.queries}, [latency[q] for q in dataset.queries]


def _score(row: MethodRow, dataset: Dataset, own: set[str]) -> None:
    for half in _HALVES:
        queries = [q for q in dataset.queries if half == "all" or split_of(q) == half]
        qrels = {q: dataset.qrels[q] for q in queries if q in dataset.qrels}
        run = ranked_run({q: row.ranking[q] for q in queries})
        row.ndcg[half] = score_run(qrels, run, [PRIMARY])[PRIMARY]
        foreign_hits = [sum(d not in own for d in row.ranking[q][:10]) for q in queries]
        row.intruders[half] = (sum(foreign_hits), sum(1 for n in foreign_hits if n))


async def evaluate_federated(
    dataset: Dataset,
    work: Path,
    *,
    foreign: Sequence[str] | None = None,
    unrelated: Path | None = None,
    methods: Sequence[str] = ("rrf", "calibrated"),
    depth: int = 20,
    concurrency: int = 4,
    log: Log | None = None,
) -> FederatedEvaluation:
    """Index (or reuse) the engines, then run every query on ``full`` and each gateway."""
    say = log or (lambda line: None)
    others = unrelated_collection(work, unrelated, say)
    sizes = await prepare_engines(work, dataset, others, say)
    own = {d.id for d in dataset.corpus}
    client = await Client.connect_stdio(
        _python_serve(work / "full"), pass_env=_env_names(), timeout=600.0, connect_timeout=120.0
    )
    try:
        ranking, latency = await _run(client, dataset, depth, concurrency)
    finally:
        await client.close()
    single = MethodRow("full", "one engine, whole collection", ranking, latency)
    _score(single, dataset, own)
    say(f"federated: full {PRIMARY} {single.ndcg['all']:.4f}")
    registry = write_registry(work, foreign)
    rows = []
    for method in methods:
        gateway = [sys.executable, "-m", "rcpkit", "gateway", str(registry), "--fusion", method]
        client = await Client.connect_stdio(
            gateway, pass_env=_env_names(), timeout=600.0, connect_timeout=180.0
        )
        try:
            ranking, latency = await _run(client, dataset, depth, concurrency)
        finally:
            await client.close()
        row = MethodRow(method, f"gateway, fusion {method}", ranking, latency)
        _score(row, dataset, own)
        rows.append(row)
        say(f"federated: gateway {method} {PRIMARY} {row.ndcg['all']:.4f}")
    chosen = max(rows, key=lambda row: row.ndcg["dev"]).key
    return FederatedEvaluation(
        dataset.name,
        len(dataset.corpus),
        len(dataset.queries),
        sizes,
        " ".join(foreign) if foreign else None,
        single,
        rows,
        chosen,
    )


def render_federated(evaluation: FederatedEvaluation) -> str:
    """A markdown table: nDCG@10 per half, the ratio to one engine, intruders in the top 10."""
    engines = ", ".join(f"{name} {count}" for name, count in evaluation.engines.items())
    lines = [
        f"{evaluation.dataset}: {evaluation.documents} documents, {evaluation.queries} queries; "
        f"engines (documents): {engines}"
        + (f", foreign `{evaluation.foreign}`" if evaluation.foreign else ""),
        "",
        "| run | nDCG@10 dev | nDCG@10 held-out | × one engine (held-out) "
        "| unrelated hits in top 10 (held-out: hits / queries) | p50 ms |",
        "|---|---|---|---|---|---|",
    ]
    for row in (evaluation.single, *evaluation.methods):
        hits, queries = row.intruders["heldout"]
        ratio = evaluation.ratio(row, "heldout")
        mark = " (chosen on dev)" if row.key == evaluation.chosen else ""
        lines.append(
            f"| {row.label}{mark} | {row.ndcg['dev']:.4f} | {row.ndcg['heldout']:.4f} "
            f"| {ratio:.3f} | {hits} / {queries} | {median(row.latency_ms):.0f} |"
        )
    total = fmean(len(r) for r in evaluation.single.ranking.values())
    lines.append("")
    lines.append(
        f"(ranked documents per query: {total:.0f}; dev/held-out: rcpkit.evaluation.split)"
    )
    return "\n".join(lines)
