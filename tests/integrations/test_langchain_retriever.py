"""RCPRetriever against real rcpkit servers: call-time k and filters, metadata, errors."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from integrations_support import bare_server, populate, serve_args

from rcpkit.client import CapabilityMissing, OptionUnsupported
from rcpkit.integrations import Connection
from rcpkit.integrations.langchain import RCPRetriever
from rcpkit.protocol.errors import RCPError


def test_k_given_at_call_time_overrides_the_constructor(corpus_url: str) -> None:
    retriever = RCPRetriever(url=corpus_url, k=5)
    assert len(retriever.invoke("bm25 retrieval", k=3)) == 3
    assert len(retriever.invoke("bm25 retrieval")) == 5
    retriever.close()


def test_a_filter_at_call_time_narrows_the_hits(corpus_url: str) -> None:
    retriever = RCPRetriever(url=corpus_url, k=12)
    german = {"field": "lang", "op": "eq", "value": "de"}
    docs = retriever.invoke("retrieval note", filter=german)
    assert len(docs) == 6
    assert {doc.metadata["lang"] for doc in docs} == {"de"}
    recent = {"and": [german, {"field": "year", "op": "gte", "value": 2027}]}
    assert {doc.metadata["year"] for doc in retriever.invoke("note", filter=recent)} == {
        2027,
        2029,
    }
    retriever.close()


def test_metadata_carries_the_citation_score_confidence_and_trust(corpus_url: str) -> None:
    retriever = RCPRetriever(url=corpus_url, k=1)
    (doc,) = retriever.invoke("citation matters")
    meta = doc.metadata
    assert doc.id == meta["id"] == f"{meta['doc_id']}#0"
    assert meta["tag"] == "citation"
    assert isinstance(meta["score"], float)
    assert 0.0 <= meta["confidence"] <= 1.0
    citation = meta["citation"]
    assert citation["source"] == meta["source"] == meta["doc_id"]
    assert citation["uri"].startswith("file:///notes/")
    assert doc.page_content[citation["start"] : citation["end"]] == doc.page_content
    assert meta["trust"]["level"] in {"trusted", "community", "untrusted"}
    retriever.close()


def test_async_and_sync_paths_return_the_same_documents(corpus_url: str) -> None:
    retriever = RCPRetriever(url=corpus_url, k=4, mode="hybrid", fusion={"method": "rrf"})
    blocking = retriever.invoke("embedding pagination")
    awaited = asyncio.run(retriever.ainvoke("embedding pagination"))
    assert [doc.id for doc in awaited] == [doc.id for doc in blocking]
    assert len(asyncio.run(retriever.ainvoke("embedding", k=2))) == 2
    retriever.close()


def test_an_option_the_server_does_not_advertise_is_refused_by_name(corpus_url: str) -> None:
    # The engine advertises rerank method cross-encoder only: colbert is refused before I/O.
    retriever = RCPRetriever(url=corpus_url, rerank={"method": "colbert"})
    with pytest.raises(OptionUnsupported, match="rerank"):
        retriever.invoke("fusion")
    retriever.close()


def test_a_filter_on_an_unadvertised_field_is_an_invalid_params_error(corpus_url: str) -> None:
    retriever = RCPRetriever(url=corpus_url)
    with pytest.raises(RCPError) as raised:
        retriever.invoke("fusion", filter={"field": "colour", "op": "eq", "value": "red"})
    assert raised.value.code == -32602
    retriever.close()


def test_a_server_without_retrieve_raises_capability_missing_sync_and_async(
    tmp_path: Path,
) -> None:
    with Connection.stdio(bare_server(tmp_path)) as connection:
        retriever = RCPRetriever(connection=connection)
        with pytest.raises(CapabilityMissing, match="`retrieve`"):
            retriever.invoke("anything")
        with pytest.raises(CapabilityMissing, match="`retrieve`"):
            asyncio.run(retriever.ainvoke("anything"))


def test_the_retriever_works_over_stdio_with_the_real_default_model(tmp_path: Path) -> None:
    # No --embedder: the engine's default, all-MiniLM-L6-v2 (int8 ONNX from PyPI).
    command = serve_args(tmp_path / "index", embedder=None)
    with Connection.stdio(command, timeout=120.0) as connection:
        assert "all-MiniLM-L6-v2" in connection.capabilities["embed"]["identity"]
        populate(connection)
        retriever = RCPRetriever(connection=connection, k=2, mode="dense")
        docs = retriever.invoke("how are search results combined and ranked together")
        assert len(docs) == 2
        assert all(doc.metadata["citation"]["source"].startswith("doc-") for doc in docs)
        assert {doc.metadata["tag"] for doc in docs} & {"fusion", "reranking"}


def test_one_connection_is_shared_by_retrievers_and_a_registry_entry_reaches_it(
    tmp_path: Path,
) -> None:
    import json

    index = tmp_path / "index"
    registry = tmp_path / "rcp.json"
    entry = {"id": "notes", "transport": "stdio", "command": serve_args(index)}
    registry.write_text(json.dumps({"engines": [entry]}))
    with Connection.registry(registry, "notes") as connection:
        populate(connection)
        first = RCPRetriever(connection=connection, k=1)
        second = RCPRetriever(
            connection=connection, k=3, filter={"field": "tag", "op": "eq", "value": "bm25"}
        )
        assert len(first.invoke("bm25")) == 1
        assert {doc.metadata["tag"] for doc in second.invoke("bm25")} == {"bm25"}
    with pytest.raises(ValueError, match="no engine `other`"):
        RCPRetriever(registry=str(registry), engine="other").invoke("bm25")


def test_token_budget_and_mode_pass_through_to_retrieve(corpus_url: str) -> None:
    unbounded = RCPRetriever(url=corpus_url, k=12, mode="sparse")
    budgeted = RCPRetriever(url=corpus_url, k=12, mode="sparse", token_budget=40)
    everything = unbounded.invoke("fusion bm25 embedding citation")
    within = budgeted.invoke("fusion bm25 embedding citation")
    assert 0 < len(within) < len(everything)
    assert [doc.id for doc in within] == [doc.id for doc in everything][: len(within)]
    unbounded.close()
    budgeted.close()


async def test_cancelling_ainvoke_sends_the_server_a_cancel(tmp_path: Path) -> None:
    from integrations_support import slow_server, until_recorded

    command, record = slow_server(tmp_path)
    with Connection.stdio(command) as connection:
        retriever = RCPRetriever(connection=connection)
        task = asyncio.create_task(retriever.ainvoke("slow"))
        await until_recorded(record, "started")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stopped = await until_recorded(record, "stopped")
        assert stopped["stopped"] == -32006  # §7.14: the server saw notifications/cancel


def test_an_http_server_behind_a_token_is_reached_with_it_and_refused_without(
    tmp_path: Path,
) -> None:
    from integrations_support import http_server

    with http_server(tmp_path / "index", tokens="s3cret-token") as url:
        with Connection.http(url, token="s3cret-token") as connection:
            populate(connection)
            assert len(RCPRetriever(connection=connection, k=2).invoke("bm25")) == 2
        with pytest.raises(RCPError, match="unauthorized") as refused:
            RCPRetriever(url=url, token="wrong-token").invoke("bm25")
        assert refused.value.code == -32012


def test_a_closed_connection_reconnects_on_the_next_call(corpus_url: str) -> None:
    with Connection.http(corpus_url) as connection:
        retriever = RCPRetriever(connection=connection, k=1)
        first = retriever.invoke("citation")
        connection.close()
        assert [doc.id for doc in asyncio.run(retriever.ainvoke("citation"))] == [
            doc.id for doc in first
        ]


def test_a_filter_that_is_not_a_tree_is_refused_naming_the_shape(corpus_url: str) -> None:
    # Issue 52.8: a string filter failed deep in the call with "dictionary update sequence
    # element #0 has length 1; 2 is required".
    retriever = RCPRetriever(url=corpus_url)
    for wrong in ("lang = en", ["lang", "en"]):
        with pytest.raises(ValueError, match=r"a §8 filter tree.*\{\"field\": \"lang\"") as raised:
            retriever.invoke("fusion", filter=wrong)
        assert type(wrong).__name__ in str(raised.value)
        with pytest.raises(ValueError, match=r"a §8 filter tree"):
            asyncio.run(retriever.ainvoke("fusion", filter=wrong))
        with pytest.raises(ValueError, match=r"a §8 filter tree"):
            RCPRetriever(url=corpus_url, filter=wrong)
    retriever.close()
