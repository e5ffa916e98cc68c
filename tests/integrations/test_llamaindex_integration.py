"""The LlamaIndex retriever and vector store against real rcpkit servers (stdio and HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from integrations_support import bare_server, serve_args
from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import NodeRelationship, QueryBundle
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

import rcpkit
from rcpkit.client import CapabilityMissing
from rcpkit.integrations import Connection, Passthrough
from rcpkit.integrations._local import LocalConnection
from rcpkit.integrations.llamaindex import (
    RCPRetriever,
    RCPVectorStore,
    to_rcp_filter,
)


@pytest.fixture(autouse=True)
def _no_openai() -> None:
    # LlamaIndex defaults to OpenAI for both; nothing here may reach for it.
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = MockLLM()


def _documents() -> list[Document]:
    topics = ["fusion", "bm25", "citation", "reranking"]
    return [
        Document(
            text=f"{topic} is how a retrieval engine ranks; {topic} note {number}.",
            doc_id=f"source-{number}",
            metadata={"tag": topic, "year": 2020 + number, "lang": "en" if number % 2 else "de"},
        )
        for number, topic in enumerate(topics)
    ]


@pytest.fixture(params=["stdio", "http", "in-process"])
def connection(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Connection]:
    from integrations_support import HASHING, http_server

    index = tmp_path / "index"
    if request.param == "stdio":
        with Connection.stdio(serve_args(index)) as opened:
            yield opened
    elif request.param == "http":
        with http_server(index) as url, Connection.http(url) as opened:
            yield opened
    else:  # index= in process: the same tests, no server
        rcpkit.open(index, create=True, embedder=HASHING).close()
        with LocalConnection(index) as opened:
            yield opened


def _again(connection: Connection) -> Connection:
    """A second connection to the same index (in process: the folder opened again)."""
    if isinstance(connection, LocalConnection):
        return LocalConnection(connection.index.where)
    return Connection(connection.source)


def test_from_documents_writes_through_index_add_and_queries_through_retrieve(
    connection: Connection,
) -> None:
    store = RCPVectorStore(connection)
    context = StorageContext.from_defaults(vector_store=store)
    index = VectorStoreIndex.from_documents(_documents(), storage_context=context)
    # The server holds the nodes: a fresh connection sees the same four.
    with _again(connection) as again:
        (hit,) = RCPRetriever(again, similarity_top_k=1).retrieve("bm25 ranks")
    assert hit.node.metadata["tag"] == "bm25"
    assert hit.node.relationships[NodeRelationship.SOURCE].node_id == "source-1"
    assert (hit.node.start_char_idx, hit.node.end_char_idx) == (0, len(hit.node.get_content()))
    assert hit.node.metadata["citation"]["source"] == hit.node.node_id
    assert hit.node.metadata["trust"]["level"] == "untrusted"
    retriever = index.as_retriever(similarity_top_k=3)
    assert len(retriever.retrieve("how does an engine rank")) == 3


def test_vector_store_query_maps_top_k_mode_alpha_and_filters(connection: Connection) -> None:
    store = RCPVectorStore(connection)
    VectorStoreIndex.from_documents(
        _documents(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="year", value=2021, operator=FilterOperator.GTE),
            MetadataFilter(key="lang", value="en"),
        ]
    )
    query = VectorStoreQuery(
        query_str="ranks", similarity_top_k=4, mode=VectorStoreQueryMode.HYBRID, alpha=0.3,
        filters=filters,
    )  # fmt: skip
    result = store.query(query)
    assert result.nodes is not None
    assert sorted(node.metadata["year"] for node in result.nodes) == [2021, 2023]
    assert result.similarities is not None and len(result.similarities) == 2
    sparse = store.query(VectorStoreQuery(query_str="citation", mode="sparse", similarity_top_k=1))
    assert sparse.nodes is not None and sparse.nodes[0].metadata["tag"] == "citation"
    awaited = asyncio.run(store.aquery(query))
    assert awaited.ids == result.ids


def test_delete_removes_every_node_of_the_source_document(connection: Connection) -> None:
    store = RCPVectorStore(connection)
    VectorStoreIndex.from_documents(
        _documents(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    store.delete("source-2")
    hits = RCPRetriever(connection, similarity_top_k=10).retrieve("ranks")
    assert sorted(hit.node.metadata["tag"] for hit in hits) == ["bm25", "fusion", "reranking"]


def test_the_retriever_passes_filters_and_options_and_awaits_natively(
    connection: Connection,
) -> None:
    RCPVectorStore(connection).add(SentenceSplitter().get_nodes_from_documents(_documents()))
    filters = MetadataFilters(
        filters=[MetadataFilter(key="tag", value=["fusion", "bm25"], operator=FilterOperator.IN)]
    )
    retriever = RCPRetriever(
        connection, similarity_top_k=5, filters=filters, options=Passthrough(mode="sparse")
    )
    blocking = retriever.retrieve("ranks")
    awaited = asyncio.run(retriever.aretrieve(QueryBundle("ranks")))
    assert {hit.node.metadata["tag"] for hit in blocking} == {"fusion", "bm25"}
    assert [hit.node.node_id for hit in awaited] == [hit.node.node_id for hit in blocking]


def test_metadata_filters_become_the_section_8_tree() -> None:
    nested = MetadataFilters(
        filters=[
            MetadataFilter(key="tag", value=["a", "b"], operator=FilterOperator.ANY),
            MetadataFilters(
                filters=[MetadataFilter(key="year", value=2020, operator=FilterOperator.LT)],
                condition=FilterCondition.NOT,
            ),
            MetadataFilter(key="lang", value=None, operator=FilterOperator.IS_EMPTY),
        ],
        condition=FilterCondition.OR,
    )
    assert to_rcp_filter(nested) == {
        "or": [
            {"or": [{"field": "tag", "op": "contains", "value": "a"},
                    {"field": "tag", "op": "contains", "value": "b"}]},
            {"not": {"field": "year", "op": "lt", "value": 2020}},
            {"field": "lang", "op": "exists", "value": False},
        ]
    }  # fmt: skip
    insensitive = MetadataFilter(key="t", value="x", operator=FilterOperator.TEXT_MATCH_INSENSITIVE)
    with pytest.raises(ValueError, match="text_match_insensitive"):
        to_rcp_filter(MetadataFilters(filters=[insensitive]))


def test_a_server_without_retrieve_or_index_is_refused_by_name(tmp_path: Path) -> None:
    with Connection.stdio(bare_server(tmp_path)) as connection:
        with pytest.raises(CapabilityMissing, match="`retrieve`"):
            RCPRetriever(connection).retrieve("anything")
        store = RCPVectorStore(connection)
        with pytest.raises(CapabilityMissing, match="`index`"):
            VectorStoreIndex.from_documents(
                _documents(), storage_context=StorageContext.from_defaults(vector_store=store)
            )
        with pytest.raises(CapabilityMissing, match="`retrieve`"):
            store.delete("source-0")


def _listed(connection: Connection) -> int:
    return len(RCPRetriever(connection, similarity_top_k=50).retrieve("note ranks retrieval"))


def test_delete_none_deletes_nothing_as_the_simple_vector_store(tmp_path: Path) -> None:
    # Issue 52.2: delete(None) deleted every document without a ref_doc_id, which is
    # everything not written through LlamaIndex. SimpleVectorStore deletes nothing.
    from integrations_support import populate
    from llama_index.core.vector_stores import SimpleVectorStore

    reference = SimpleVectorStore()
    VectorStoreIndex.from_documents(
        _documents(), storage_context=StorageContext.from_defaults(vector_store=reference)
    )
    with Connection.stdio(serve_args(tmp_path / "index")) as connection:
        populate(connection)  # twelve documents written by another client
        store = RCPVectorStore(connection)
        VectorStoreIndex.from_documents(
            _documents(), storage_context=StorageContext.from_defaults(vector_store=store)
        )
        before = _listed(connection)
        for target in (reference, store):
            target.delete(None)  # type: ignore[arg-type]
            asyncio.run(target.adelete(None))  # type: ignore[arg-type]
        assert len(reference.data.embedding_dict) == 4
        assert _listed(connection) == before == 16


def test_delete_nodes_without_ids_is_refused_not_read_as_every_node(tmp_path: Path) -> None:
    # SimpleVectorStore.delete_nodes() empties itself; an RCP index also holds what other
    # clients wrote, so "every node" is refused here and nothing is lost.
    from integrations_support import populate

    with Connection.stdio(serve_args(tmp_path / "index")) as connection:
        populate(connection)
        store = RCPVectorStore(connection)
        with pytest.raises(ValueError, match="node_ids"):
            store.delete_nodes()
        with pytest.raises(ValueError, match="node_ids"):
            asyncio.run(store.adelete_nodes(None))
        store.delete_nodes([])
        assert _listed(connection) == 12


def test_the_retriever_and_store_take_the_shorthand_the_docs_promise(tmp_path: Path) -> None:
    # Issue 52.12: docs/integrations.md promises `url=`/`token=`, `command=` or
    # `registry=`/`engine=` on every integration; these took a Connection only.
    import json

    command = serve_args(tmp_path / "index")
    registry = tmp_path / "rcp.json"
    entry = {"id": "notes", "transport": "stdio", "command": command}
    registry.write_text(json.dumps({"engines": [entry]}))
    store = RCPVectorStore(command=command)
    VectorStoreIndex.from_documents(
        _documents(), storage_context=StorageContext.from_defaults(vector_store=store)
    )
    store.client.close()
    retriever = RCPRetriever(registry=str(registry), engine="notes", similarity_top_k=1)
    (hit,) = retriever.retrieve("bm25 ranks")
    assert hit.node.metadata["tag"] == "bm25"
    retriever.connection.close()
    with pytest.raises(ValueError, match="either `connection`"):
        RCPVectorStore(retriever.connection, url="http://127.0.0.1:9/rcp")
    with pytest.raises(ValueError, match="either `connection`"):  # not silently ignored
        RCPRetriever(retriever.connection, token="s3cret")
    with pytest.raises(ValueError, match="give `connection`, or one of `command`"):
        RCPVectorStore()


def test_filters_that_are_not_metadata_filters_are_refused_naming_the_shape() -> None:
    # A dict or a string failed with "'dict' object has no attribute 'filters'"; an
    # empty group nested in a NOT with an IndexError. Both are refused before any I/O.
    unopened = Connection.http("http://127.0.0.1:9/rcp")
    for wrong in ({"lang": "en"}, "lang=en"):
        with pytest.raises(ValueError, match=r"MetadataFilters\(filters=\[MetadataFilter"):
            RCPRetriever(unopened, filters=wrong)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=type(wrong).__name__):
            RCPVectorStore(unopened).query(VectorStoreQuery(query_str="x", filters=wrong))  # type: ignore[arg-type]
    for condition in (FilterCondition.NOT, FilterCondition.AND):
        hollow = MetadataFilters(filters=[MetadataFilters(filters=[])], condition=condition)
        with pytest.raises(ValueError, match="empty MetadataFilters"):
            RCPRetriever(unopened, filters=hollow)
    assert unopened._opened is None  # nothing was sent
