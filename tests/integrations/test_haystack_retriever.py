"""The Haystack retriever component in a pipeline, over real rcpkit servers (stdio and HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("haystack")

from haystack import Document, Pipeline
from haystack.document_stores.errors import DocumentStoreError
from haystack.errors import FilterError
from haystack.utils import Secret
from integrations_support import bare_server, corpus, http_server, serve_args

from rcpkit.client import CapabilityMissing
from rcpkit.integrations.haystack import RCPDocumentStore, RCPRetriever


def _haystack_corpus() -> list[Document]:
    return [
        Document(id=entry["id"], content=entry["text"], meta=entry["meta"]) for entry in corpus()
    ]


@pytest.fixture(params=["stdio", "http"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RCPDocumentStore]:
    index = tmp_path / "index"
    if request.param == "stdio":
        opened = RCPDocumentStore(command=serve_args(index))
        opened.write_documents(_haystack_corpus())
        yield opened
        opened.connection.close()
    else:
        with http_server(index) as url:
            opened = RCPDocumentStore(url=url)
            opened.write_documents(_haystack_corpus())
            yield opened
            opened.connection.close()


def test_a_pipeline_retrieves_with_top_k_and_filters(store: RCPDocumentStore) -> None:
    pipeline = Pipeline()
    pipeline.add_component("retriever", RCPRetriever(document_store=store, top_k=3))
    pipeline.warm_up()
    found = pipeline.run({"retriever": {"query": "bm25 retrieval"}})["retriever"]["documents"]
    assert len(found) == 3
    assert found[0].meta["tag"] == "bm25"
    assert found[0].score == found[0].meta["score"]
    assert found[0].meta["citation"]["source"] == found[0].id
    assert found[0].meta["trust"]["level"] == "untrusted"
    german = {"field": "meta.lang", "operator": "==", "value": "de"}
    narrowed = pipeline.run({"retriever": {"query": "note", "top_k": 12, "filters": german}})
    assert {doc.meta["lang"] for doc in narrowed["retriever"]["documents"]} == {"de"}
    assert len(narrowed["retriever"]["documents"]) == 6


def test_run_async_returns_what_run_returns(store: RCPDocumentStore) -> None:
    retriever = RCPRetriever(document_store=store, top_k=4, mode="hybrid")
    blocking = retriever.run(query="citation")["documents"]
    awaited = asyncio.run(retriever.run_async(query="citation"))["documents"]
    assert [doc.id for doc in awaited] == [doc.id for doc in blocking]


def test_the_retriever_round_trips_through_to_dict_with_an_env_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RCP_TEST_TOKEN", "secret-value")
    store = RCPDocumentStore(
        url="http://127.0.0.1:9/rcp", token=Secret.from_env_var("RCP_TEST_TOKEN")
    )
    retriever = RCPRetriever(document_store=store, top_k=2, filters={"field": "meta.tag",
                                                                      "operator": "==",
                                                                      "value": "x"})  # fmt: skip
    data = retriever.to_dict()
    assert "secret-value" not in str(data)
    again = RCPRetriever.from_dict(data)
    assert again.top_k == 2 and again.filters == retriever.filters
    assert again.document_store.connection.source.token == "secret-value"


def test_refusals_are_haystack_errors_naming_the_cause(tmp_path: Path) -> None:
    store = RCPDocumentStore(command=bare_server(tmp_path))
    with pytest.raises(DocumentStoreError, match="`index`"):
        store.write_documents([Document(content="x")], policy=_overwrite())
    with pytest.raises(DocumentStoreError, match="`retrieve`"):
        store.count_documents()
    with pytest.raises(CapabilityMissing, match="`retrieve`"):
        RCPRetriever(document_store=store).run(query="x")
    with pytest.raises(FilterError, match="metadata fields only"):
        store.filter_documents({"field": "content", "operator": "==", "value": "x"})
    store.connection.close()


def test_the_store_and_retriever_work_with_the_real_default_model(tmp_path: Path) -> None:
    store = RCPDocumentStore(command=serve_args(tmp_path / "index", embedder=None), timeout=120)
    assert "all-MiniLM-L6-v2" in store.connection.capabilities["embed"]["identity"]
    store.write_documents(_haystack_corpus())
    found = RCPRetriever(document_store=store, top_k=2, mode="dense").run(
        query="how are search results combined and ranked together"
    )["documents"]
    assert len(found) == 2
    assert {doc.meta["tag"] for doc in found} & {"fusion", "reranking"}
    store.connection.close()


def _overwrite():  # type: ignore[no-untyped-def]
    from haystack.document_stores.types import DuplicatePolicy

    return DuplicatePolicy.OVERWRITE


def test_a_store_over_a_shared_connection_serializes_without_a_plain_token(
    tmp_path: Path,
) -> None:
    from rcpkit.integrations import Connection

    with Connection.stdio(serve_args(tmp_path / "index")) as connection:
        store = RCPDocumentStore.from_connection(connection)
        store.write_documents(_haystack_corpus()[:3])
        assert RCPDocumentStore.from_dict(store.to_dict()).connection.source == connection.source
        assert len(RCPRetriever(document_store=store, top_k=2).run(query="bm25")["documents"]) == 2
    with pytest.raises(ValueError, match=r"Secret\.from_env_var"):
        RCPDocumentStore.from_connection(Connection.http("http://127.0.0.1:9", token="t")).to_dict()


def test_the_retriever_takes_the_shorthand_the_docs_promise(tmp_path: Path) -> None:
    # Issue 52.12: RCPRetriever(command=[...]) was a TypeError although docs/integrations.md
    # says each integration takes `url=`/`token=`, `command=` or `registry=`/`engine=`.
    command = serve_args(tmp_path / "index")
    RCPDocumentStore(command=command).write_documents(_haystack_corpus())
    retriever = RCPRetriever(command=command, top_k=2)
    found = retriever.run(query="citation matters")["documents"]
    assert len(found) == 2 and found[0].meta["tag"] == "citation"
    again = RCPRetriever.from_dict(retriever.to_dict())
    assert again.document_store.connection.source == retriever.document_store.connection.source
    retriever.document_store.connection.close()
    with pytest.raises(ValueError, match="either `document_store`"):
        RCPRetriever(document_store=retriever.document_store, command=command)
    with pytest.raises(ValueError, match="give `document_store`, or one of `command`"):
        RCPRetriever(top_k=2)


def test_a_plain_string_token_reaches_the_server_and_is_never_serialized(tmp_path: Path) -> None:
    with http_server(tmp_path / "index", tokens="s3cret-token") as url:
        retriever = RCPRetriever(url=url, token="s3cret-token", top_k=1)
        retriever.document_store.write_documents(_haystack_corpus())
        assert len(retriever.run(query="bm25")["documents"]) == 1
        with pytest.raises(ValueError, match="serialize"):
            retriever.to_dict()
        retriever.document_store.connection.close()
