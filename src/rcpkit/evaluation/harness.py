"""Run a dataset through a server over the wire: load it, then every query of every stage.

Everything goes through the public RCP surface of a connected ``Client``:
``index/add`` to load the corpus when the server is writable (§7.10, stable ids
so a retry is an upsert), then ``retrieve`` (or ``graph``) per query, pinned to
one ``indexVersion`` and one ``seed`` so the run is repeatable (§7.7.1,
Appendix F). Queries run a few at a time; each answer is mapped to document ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from rcpkit.client import Client, TransportClosed
from rcpkit.evaluation.baseline import BM25_BASELINE, bm25_baseline
from rcpkit.evaluation.dataset import CorpusDocument, Dataset
from rcpkit.evaluation.metrics import PRIMARY, Scores, ranked_run, score_run
from rcpkit.evaluation.report import Evaluation, Row
from rcpkit.evaluation.stages import Stage, available_stages, select_stages
from rcpkit.protocol.content import Hit
from rcpkit.protocol.errors import RCPError

__all__ = [
    "LAYOUTS",
    "Bars",
    "Loaded",
    "Pinning",
    "StageResult",
    "Tick",
    "as_added",
    "cited_ids",
    "document_ids",
    "evaluate",
    "load_corpus",
    "run_stage",
]

Tick = Callable[[int], None]  # advance a progress bar by n
Bars = Callable[[int, str], AbstractContextManager[Tick | None]]  # (total, label) → a bar


@dataclass(frozen=True, slots=True)
class Loaded:
    documents: int
    skipped: int  # documents with neither title nor text: nothing to index
    index_version: str | None
    seconds: float


@dataclass(frozen=True, slots=True)
class Pinning:
    """What every query of a run shares: the snapshot, the seed, the depth, the unit."""

    index_version: str | None
    seed: int
    depth: int  # documents ranked per query (Recall@100 needs 100)
    k: int  # hits asked for: more than depth when hits are chunks of documents
    unit: str | None  # "document" when the server can return whole documents (§7.7.2)
    snapshots: bool = False  # retrieve.snapshots: only then must an answer match the pin


@dataclass(slots=True)
class StageResult:
    stage: Stage
    ranking: dict[str, list[str]]  # query id → document ids, best first
    scores: Scores
    latency_ms: list[float]
    errors: dict[str, str] = field(default_factory=dict)  # query id → the server's error
    candidates: list[int] = field(default_factory=list)  # usage.candidates (Appendix F)


async def evaluate(
    client: Client,
    dataset: Dataset,
    *,
    load: bool = True,
    stages: list[str] | None = None,
    depth: int = 100,
    seed: int = 0,
    concurrency: int = 4,
    bars: Bars | None = None,
    log: Callable[[str], None] | None = None,
    layout: str = "titled",
) -> Evaluation:
    """Load (when asked and writable), run the chosen stages and the BM25 baseline.

    ``layout`` is how a document is loaded (`load_corpus`).

    ``bars(total, label)`` opens a progress bar whose tick advances it; ``log``
    gets one line per finished stage.
    """
    bars = bars or _no_bar
    if not isinstance(client.raw_capabilities.get("retrieve"), dict):  # §6: {} is offered
        raise ValueError(f"{client.server.name or 'the server'} does not offer retrieve")
    chosen = select_stages(available_stages(client.raw_capabilities), stages)
    loaded: Loaded | None = None
    if load and _writable(client):
        with bars(sum(not d.empty for d in dataset.corpus), "index/add") as tick:
            loaded = await load_corpus(client, dataset, tick=tick, layout=layout)
    pinning = await _pinning(client, dataset, loaded, depth, seed)
    results: list[StageResult] = []
    for stage in chosen:
        started = time.perf_counter()
        with bars(len(dataset.queries), stage.key) as tick:
            done = await run_stage(
                client, stage, dataset, pinning, concurrency=concurrency, tick=tick
            )
        results.append(done)
        if log is not None:  # one line per stage, for logs where no bar is drawn
            log(
                f"{stage.key}: {PRIMARY} {done.scores[PRIMARY]:.4f} "
                f"({time.perf_counter() - started:.1f} s)"
            )
    base_row = _baseline_row(dataset, depth) if dataset.corpus else None
    rows = [
        Row(
            r.stage.key,
            r.stage.label,
            r.scores,
            r.stage.params,
            r.latency_ms,
            len(r.errors),
            r.ranking,
            fmean(r.candidates) if r.candidates else None,
            {q: r.errors[q] for q in dataset.queries if q in r.errors},
        )
        for r in results
    ]
    server = f"{client.server.name} {client.server.version}".strip() or "server"
    return Evaluation(
        dataset.name,
        len(dataset.corpus),
        len(dataset.queries),
        server,
        pinning.index_version,
        seed,
        base_row,
        rows,
        BM25_BASELINE.name,
        depth,
        pinning.k,
        pinning.unit,
    )


def _baseline_row(dataset: Dataset, depth: int) -> Row:
    """BM25 over the dataset's own corpus (a questions file has none: no baseline)."""
    baseline = bm25_baseline(dataset, depth)
    ranking = {q: list(docs) for q, docs in baseline.items()}
    scores = score_run(dataset.qrels, ranked_run(ranking))
    return Row("bm25-baseline", "BM25 baseline (bm25s)", scores, {}, ranking=ranking)


def _writable(client: Client) -> bool:
    index = client.raw_capabilities.get("index")
    return isinstance(index, dict) and index.get("writable") is True


async def _pinning(
    client: Client, dataset: Dataset, loaded: Loaded | None, depth: int, seed: int
) -> Pinning:
    retrieve = client.raw_capabilities["retrieve"]
    max_k = retrieve.get("maxK") if isinstance(retrieve.get("maxK"), int) else None
    whole = "document" in (retrieve.get("units") or [])
    wanted = depth if whole else depth * 2  # chunks collapse into fewer documents
    k = min(wanted, max_k) if max_k else wanted
    version = loaded.index_version if loaded else None
    if version is None and retrieve.get("snapshots") is True:
        probe = await client.retrieve(next(iter(dataset.queries.values()), "a"), k=1)
        version = probe.index_version
    snapshots = retrieve.get("snapshots") is True
    return Pinning(version, seed, depth, k, "document" if whole else None, snapshots)


@contextlib.contextmanager
def _no_bar(total: int, label: str) -> Iterator[Tick | None]:
    yield None


LAYOUTS = ("titled", "meta-title")


def as_added(document: CorpusDocument, layout: str = "titled") -> dict[str, Any]:
    """The ``index/add`` document for a corpus entry, in one of the ``LAYOUTS``.

    ``titled``: the title in ``title``. ``meta-title``: the way many clients load a
    collection, the title as the first line of ``text`` and in ``meta.title``, no
    ``title`` (issue 16's outside judges load theirs so).
    """
    if layout == "titled" or not document.title:
        meta = document.meta or None
        return {"id": document.id, "title": document.title or None, "text": document.text,
                "meta": meta}  # fmt: skip
    text = f"{document.title}\n{document.text}" if document.text else document.title
    return {"id": document.id, "text": text, "meta": {**document.meta, "title": document.title}}


async def load_corpus(
    client: Client,
    dataset: Dataset,
    *,
    batch: int = 64,
    tick: Tick | None = None,
    layout: str = "titled",
) -> Loaded:
    """Add every non-empty document of the corpus, ``batch`` per ``index/add``."""
    started = time.perf_counter()
    documents = [document for document in dataset.corpus if not document.empty]
    version: str | None = None
    for start in range(0, len(documents), batch):
        part = documents[start : start + batch]
        result = await client.index_add(
            [as_added(d, layout) for d in part],
            timeout=600.0,
        )
        version = result.index_version or version
        if tick is not None:
            tick(len(part))
    skipped = len(dataset.corpus) - len(documents)
    return Loaded(len(documents), skipped, version, time.perf_counter() - started)


async def run_stage(
    client: Client,
    stage: Stage,
    dataset: Dataset,
    pinning: Pinning,
    *,
    concurrency: int = 4,
    tick: Tick | None = None,
) -> StageResult:
    """Every query of ``dataset`` through ``stage``; failures are kept per query."""
    ranking: dict[str, list[str]] = {}
    latency: dict[str, float] = {}
    errors: dict[str, str] = {}
    candidates: list[int] = []
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(query_id: str, text: str) -> None:
        async with gate:
            started = time.perf_counter()
            try:
                hits, used = await _ask(client, stage, text, pinning)
            except TransportClosed:
                raise  # the server is gone: every later query would "fail" too
            except RCPError as error:
                errors[query_id] = str(error)  # "[code] message"
                hits, used = [], None
            except _OtherSnapshot as error:
                errors[query_id] = str(error)
                hits, used = [], None
            latency[query_id] = (time.perf_counter() - started) * 1000
            judged = dataset.qrels[query_id] if dataset.cited else None
            ids = document_ids(hits) if judged is None else cited_ids(hits, judged)
            ranking[query_id] = ids[: pinning.depth]
            if used is not None:
                candidates.append(used)
            if tick is not None:
                tick(1)

    try:
        async with asyncio.TaskGroup() as group:
            for query_id, text in dataset.queries.items():
                group.create_task(one(query_id, text))
    except* TransportClosed as lost:
        raise lost.exceptions[0] from None
    ordered = {query: ranking[query] for query in dataset.queries}
    return StageResult(
        stage,
        ordered,
        score_run(dataset.qrels, ranked_run(ordered)),
        [latency[query] for query in dataset.queries],
        errors,
        candidates,
    )


async def _ask(
    client: Client, stage: Stage, text: str, pinning: Pinning
) -> tuple[Sequence[Hit], int | None]:
    if stage.method == "graph":
        found = await client.graph(query=text, k=pinning.k, unit="chunk", **_typed(stage.params))
        return found.hits or [], None
    fields: dict[str, Any] = {"seed": pinning.seed, "include_text": False}
    if pinning.index_version is not None:
        fields["index_version"] = pinning.index_version
    if pinning.unit is not None:
        fields["unit"] = pinning.unit
    result = await client.retrieve(text, k=pinning.k, **fields, **_typed(stage.params))
    served = result.index_version
    pinned = pinning.index_version if pinning.snapshots else None
    if pinned is not None and served is not None and served != pinned:
        raise _OtherSnapshot(served, pinned)
    used = result.usage.candidates if result.usage else None
    return result.hits, used


class _OtherSnapshot(Exception):
    """§7.7.1: a pinned query answered from another snapshot (a server MUST NOT do that)."""

    def __init__(self, served: str, pinned: str) -> None:
        super().__init__(f"served indexVersion {served!r}, not the pinned {pinned!r}")


def _typed(params: dict[str, Any]) -> dict[str, Any]:
    """Wire names (``topN``) to the typed fields ``Client`` builds params from."""
    import msgspec

    from rcpkit.protocol import messages as m

    typed: dict[str, Any] = {}
    for name, value in params.items():
        if name == "fusion":
            typed[name] = msgspec.convert(value, m.Fusion)
        elif name == "rerank":
            typed[name] = msgspec.convert(value, m.RerankOption)
        elif name == "mmr":
            typed[name] = msgspec.convert(value, m.Mmr)
        else:
            typed[name] = value
    return typed


def document_ids(hits: Sequence[Hit]) -> list[str]:
    """The documents of ranked hits, first occurrence kept (chunks of one document collapse)."""
    ids: dict[str, None] = {}
    for hit in hits:
        if hit.chunk is not None:
            ids.setdefault(hit.chunk.doc_id)
        elif hit.unit in (None, "document") or "#" not in str(hit.id):
            ids.setdefault(str(hit.id))
        else:
            ids.setdefault(str(hit.id).rpartition("#")[0])
    return list(ids)


def cited_ids(hits: Sequence[Hit], judged: Collection[str]) -> list[str]:
    """Like `document_ids`, each document named as ``judged`` names it, when it does.

    A questions file names a document as ``rcpkit query`` prints it: its id, its
    citation's source, or the id of one of its chunks (``guide.md#3`` names
    ``guide.md``: the ranking is of documents, so any of its chunks finds it).
    """
    ids: dict[str, None] = {}
    for hit, document in zip(hits, _documents_of(hits), strict=True):
        names = [document, str(hit.id)]
        if hit.citation is not None and hit.citation.source:
            names.append(hit.citation.source)
        named = next((name for name in names if name in judged), None)
        if named is None:
            named = next((name for name in judged if _chunk_of(name, document)), document)
        ids.setdefault(named)
    return list(ids)


def _documents_of(hits: Sequence[Hit]) -> list[str]:
    return [document_ids([hit])[0] for hit in hits]


def _chunk_of(name: str, document: str) -> bool:
    """Whether ``name`` is a chunk id of ``document`` (``DOC#N``, as `rcpkit query` prints)."""
    head, hash, index = name.rpartition("#")
    return bool(hash) and head == document and index.isdigit()
