"""``evaluate()`` from Python against a connected client: loading, pinning, failures, bars."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_support import make_engine
from eval_support import write_dataset

from rcpkit import App, ErrorCode, RCPError, RequestContext
from rcpkit.client import TransportClosed, connect_in_memory
from rcpkit.evaluation import evaluate, load_dataset, render_table
from rcpkit.evaluation.dataset import CorpusDocument
from rcpkit.evaluation.harness import Tick, as_added
from rcpkit.evaluation.report import to_json
from rcpkit.handlers.engine import build_engine_app
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit


async def test_the_corpus_is_loaded_once_and_every_query_is_pinned_to_its_version(
    tmp_path: Path,
) -> None:
    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    engine = make_engine(tmp_path / "idx")
    client = await connect_in_memory(build_engine_app(engine).server)
    ticks: dict[str, int] = {}
    lines: list[str] = []

    @contextlib.contextmanager
    def bars(total: int, label: str) -> Iterator[Tick]:
        ticks[label] = 0

        def tick(n: int) -> None:
            ticks[label] += n

        yield tick
        assert ticks[label] == total  # every document and every query was counted

    try:
        first = await evaluate(client, dataset, stages=["sparse", "dense"], bars=bars,
                               log=lines.append)  # fmt: skip
        assert ticks == {"index/add": 24, "sparse": 6, "dense": 6}  # the empty one is not sent
        assert [line.split(":")[0] for line in lines] == ["sparse", "dense"]
        assert first.index_version == str(engine.store.version)
        assert all(row.candidates and row.candidates > 0 for row in first.rows)
        # Evaluated again without loading: same version, same rankings (§7.7.1).
        again = await evaluate(client, dataset, load=False, stages=["sparse"])
        assert again.index_version == first.index_version
        assert again.rows[0].ranking == first.rows[0].ranking
        assert engine.store.count()[0] == 24  # the empty document was not sent
    finally:
        await client.close()
        engine.close()
    assert "| sparse only |" in render_table(first)


async def test_a_depth_beyond_the_servers_max_k_is_clamped_not_refused(tmp_path: Path) -> None:
    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    engine = make_engine(tmp_path / "idx", max_k=5)
    client = await connect_in_memory(build_engine_app(engine).server)
    try:
        result = await evaluate(client, dataset, stages=["default"], depth=100)
    finally:
        await client.close()
        engine.close()
    (row,) = result.rows
    assert row.errors == 0
    assert all(len(ranked) <= 5 for ranked in (row.ranking or {}).values())
    # The record says what was asked, so a reader sees Recall@100 came from 5 hits.
    record = to_json(result)
    assert (record["depth"], record["k"], record["unit"]) == (100, 5, "document")


async def test_a_query_the_server_rejects_is_kept_as_a_failure_and_scores_zero(
    tmp_path: Path,
) -> None:
    app = App("flaky", "1.0")

    @app.retrieve(modes=["sparse"], max_k=100)
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        text = str(params.query)
        if "shell" in text:
            raise RCPError(ErrorCode.BACKEND_UNAVAILABLE, "the shell shard is down")
        topic = next(t for t in ("wing", "heat", "shock") if t in text)
        return m.RetrieveResult(hits=[Hit(id=f"{topic}{n}", score=1.0 - n / 10) for n in range(4)])

    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(app.server)
    try:
        result = await evaluate(client, dataset)  # read-only: nothing to load
    finally:
        await client.close()
    default = result.rows[0]
    assert default.errors == 2  # q3 and q6 ask about shells
    assert default.scores.per_query["q3"]["nDCG@10"] == 0.0
    assert default.scores.per_query["q1"]["nDCG@10"] == 1.0
    assert result.index_version is None  # the server has no snapshots to pin
    assert "(2 failed)" in render_table(result)
    # Why they failed is kept, in the record and under the table.
    failures = to_json(result)["runs"][0]["failures"]
    assert sorted(failures) == ["q3", "q6"]
    assert "the shell shard is down" in failures["q3"]
    assert "first q3: [-32010] the shell shard is down" in render_table(result)


def _topic_app(name: str, **capability: object) -> App:
    """A read-only server that answers each query with the four documents of its topic."""
    app = App(name, "1.0")

    @app.retrieve(**capability)
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        text = str(params.query)
        topic = next((t for t in ("wing", "heat", "shell", "shock") if t in text), "wing")
        return m.RetrieveResult(hits=[Hit(id=f"{topic}{n}", score=1.0 - n / 10) for n in range(4)])

    return app


async def test_a_retrieve_capability_without_metadata_is_still_retrieve(tmp_path: Path) -> None:
    # §6: presence means supported, and the value MAY be {}.
    app = _topic_app("bare")
    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(app.server)
    try:
        assert client.raw_capabilities["retrieve"] == {}
        result = await evaluate(client, dataset)
    finally:
        await client.close()
    (row,) = result.rows
    assert row.errors == 0
    assert row.scores["R@50"] == 1.0


async def test_a_server_that_dies_mid_run_stops_the_run_instead_of_scoring_zeros(
    tmp_path: Path,
) -> None:
    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(_topic_app("dying", max_k=100).server)
    answered = 0
    real = client.retrieve

    async def retrieve(*args: Any, **kwargs: Any) -> m.RetrieveResult:
        nonlocal answered
        answered += 1
        if answered > 2:
            raise TransportClosed("the server process exited")
        return await real(*args, **kwargs)

    client.retrieve = retrieve  # type: ignore[method-assign]
    try:
        with pytest.raises(TransportClosed, match="the server process exited"):
            await evaluate(client, dataset, concurrency=1)
    finally:
        await client.close()


async def test_an_answer_from_another_snapshot_than_the_pinned_one_is_a_failure(
    tmp_path: Path,
) -> None:
    # §7.7.1: a pinned server serves that snapshot or fails, never silently another.
    app = App("drifting", "1.0")
    calls = 0

    @app.retrieve(max_k=100, snapshots=True)
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        nonlocal calls
        calls += 1
        version = "v1" if calls <= 3 else "v2"  # the probe and two queries, then a reindex
        hits = [Hit(id=f"wing{n}", score=1.0 - n / 10) for n in range(4)]
        return m.RetrieveResult(hits=hits, index_version=version)

    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(app.server)
    try:
        result = await evaluate(client, dataset, concurrency=1)
    finally:
        await client.close()
    assert result.index_version == "v1"
    (row,) = result.rows
    assert row.errors == 4  # q3..q6 came from v2
    assert row.scores.per_query["q1"]["nDCG@10"] == 1.0
    assert row.scores.per_query["q5"]["nDCG@10"] == 0.0  # a wing query, but from v2


async def test_a_server_without_snapshots_is_not_held_to_the_versions_it_echoes(
    tmp_path: Path,
) -> None:
    app = App("echoing", "1.0")
    calls = 0

    @app.retrieve(max_k=100)  # no snapshots: it cannot serve a pinned version
    def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        nonlocal calls
        calls += 1
        hits = [Hit(id=f"wing{n}", score=1.0 - n / 10) for n in range(4)]
        return m.RetrieveResult(hits=hits, index_version=str(calls))

    @app.index_add(writable=True)
    def add(params: m.IndexAddParams, ctx: RequestContext) -> m.IndexAddResult:
        return m.IndexAddResult(ids=[str(d.id) for d in params.documents], index_version="0")

    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(app.server)
    try:
        result = await evaluate(client, dataset, concurrency=1)
    finally:
        await client.close()
    assert result.rows[0].errors == 0


async def test_a_rerank_stage_keeps_the_funnel_top_n_at_least_k(tmp_path: Path) -> None:
    # §7.7: candidateK >= rerank.topN >= k; asking 200 hits with topN 30 breaks it.
    app = _topic_app("reranking", max_k=500, rerank_builtin=True)

    @app.rerank(methods=["cross-encoder"])
    def rerank(params: m.RerankParams, ctx: RequestContext) -> m.RerankResult:
        raise AssertionError("not called: the stage reranks inside retrieve")

    dataset = load_dataset(write_dataset(tmp_path / "tiny"))
    client = await connect_in_memory(app.server)
    asked: list[tuple[int, int | None]] = []
    real = client.retrieve

    async def retrieve(query: Any, *, k: int, **fields: Any) -> m.RetrieveResult:
        option = fields.get("rerank")
        asked.append((k, option.top_n if option is not None else None))
        return await real(query, k=k, **fields)

    client.retrieve = retrieve  # type: ignore[method-assign]
    try:
        result = await evaluate(client, dataset, stages=["rerank-cross-encoder"])
    finally:
        await client.close()
    assert result.rows[0].errors == 0
    assert "30" not in result.rows[0].label  # the server, not the harness, picks the head
    assert asked and all(top_n is None or top_n >= k for k, top_n in asked)


def test_the_meta_title_layout_loads_a_document_as_outside_judges_do() -> None:
    document = CorpusDocument("d1", "Wing flutter", "a body", {"year": 1960})
    assert as_added(document) == {"id": "d1", "title": "Wing flutter", "text": "a body",
                                  "meta": {"year": 1960}}  # fmt: skip
    assert as_added(document, "meta-title") == {
        "id": "d1",
        "text": "Wing flutter\na body",
        "meta": {"year": 1960, "title": "Wing flutter"},
    }
    untitled = CorpusDocument("d2", "", "just text", {})
    assert as_added(untitled, "meta-title") == {"id": "d2", "title": None, "text": "just text",
                                                "meta": None}  # fmt: skip
