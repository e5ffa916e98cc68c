"""The integrations in process (``index=``): the hits of ``rcpkit.open(...).search``, no server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import rcpkit
from rcpkit.integrations._local import LocalConnection

HASHING = "hashing:64"
TEXTS = {
    "fusion": "Reciprocal rank fusion adds the reciprocal ranks of each list.",
    "bm25": "BM25 saturates term frequency and normalises by document length.",
    "citation": "A citation points at the exact characters a passage came from.",
    "rerank": "A reranker reads the query and the passage together to rescore it.",
}
QUERY = "how does rank fusion combine lists"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    where = tmp_path / "idx"
    with rcpkit.open(where, create=True, embedder=HASHING) as index:
        index.add([{"id": key, "text": text, "meta": {"tag": key}} for key, text in TEXTS.items()])
    return where


def _expected(folder: Path, k: int) -> list[str]:
    with rcpkit.open(folder) as index:
        return [hit.id for hit in index.search(QUERY, k=k)]


async def test_langchain_retriever_in_process_returns_search_s_hits(folder: Path) -> None:
    from rcpkit.integrations.langchain import RCPRetriever

    expected = _expected(folder, 3)
    retriever = RCPRetriever(index=str(folder), k=3)
    try:
        assert [doc.id for doc in retriever.invoke(QUERY)] == expected
        assert [doc.id for doc in await retriever.ainvoke(QUERY)] == expected
        filtered = retriever.invoke(QUERY, filter={"field": "tag", "op": "eq", "value": "bm25"})
        assert [doc.metadata["doc_id"] for doc in filtered] == ["bm25"]
    finally:
        retriever.close()
    with rcpkit.open(folder) as opened:  # an opened Index is used as it is, not closed
        shared = RCPRetriever(index=opened, k=3)
        assert [doc.id for doc in shared.invoke(QUERY)] == expected
        shared.close()
        assert len(opened.search(QUERY, k=1)) == 1


def test_llamaindex_retriever_and_vector_store_in_process(folder: Path) -> None:
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from rcpkit.integrations.llamaindex import RCPRetriever, RCPVectorStore

    expected = _expected(folder, 2)
    with rcpkit.open(folder) as opened:
        nodes = RCPRetriever(index=opened, similarity_top_k=2).retrieve(QUERY)
        assert [f"{item.node.node_id}#0" for item in nodes] == expected  # node: the document
        store = RCPVectorStore(index=opened)
        assert store.add([TextNode(id_="extra", text="rank fusion of many lists, again")]) == [
            "extra"
        ]
        found = store.query(VectorStoreQuery(query_str="fusion lists", similarity_top_k=5))
        assert "extra" in found.ids
        store.delete_nodes(["extra"])
        assert opened.stats()["documents"] == len(TEXTS)


def test_haystack_store_and_retriever_in_process(folder: Path) -> None:
    from haystack import Document

    from rcpkit.integrations.haystack import RCPDocumentStore, RCPRetriever

    store = RCPDocumentStore(index=str(folder))
    assert store.count_documents() == len(TEXTS)
    store.write_documents([Document(id="new", content="fusion of lists", meta={"tag": "x"})])
    assert store.count_documents() == len(TEXTS) + 1
    tagged = store.filter_documents({"field": "meta.tag", "operator": "==", "value": "x"})
    assert [document.id for document in tagged] == ["new"]
    store.delete_documents(["new"])
    assert store.to_dict()["init_parameters"] == {"index": str(folder)}
    store.connection.close()
    expected = _expected(folder, 2)
    retriever = RCPRetriever(index=str(folder), top_k=2)
    found = retriever.run(query=QUERY)["documents"]
    assert [document.meta["id"] for document in found] == expected
    retriever.document_store.connection.close()


def test_an_index_and_a_server_together_are_refused(folder: Path) -> None:
    from rcpkit.integrations.langchain import RCPRetriever

    with pytest.raises(ValueError, match="not both"):
        RCPRetriever(index=str(folder), url="http://127.0.0.1:9/rcp")


def test_a_bad_filter_in_process_is_the_rcp_error_the_server_gives(folder: Path) -> None:
    connection: Any = LocalConnection(folder)
    try:
        with pytest.raises(rcpkit.RCPError) as caught:
            connection.client.retrieve(
                QUERY, k=2, filter={"field": "nowhere", "op": "eq", "value": 1}
            )
        assert caught.value.code == -32602
    finally:
        connection.close()


def test_the_frameworks_own_embeddings_go_into_an_index_of_own_vectors(tmp_path: Path) -> None:
    from haystack import Document
    from haystack.document_stores.types import DuplicatePolicy
    from llama_index.core.schema import TextNode

    from rcpkit.integrations.haystack import RCPDocumentStore
    from rcpkit.integrations.llamaindex import RCPVectorStore

    with rcpkit.open(tmp_path / "own", create=True, vectors=3) as opened:
        store = RCPDocumentStore(index=opened)
        written = [Document(id="h", content="haystack", embedding=[0.0, 1.0, 0.0])]
        store.write_documents(written, policy=DuplicatePolicy.OVERWRITE)
        RCPVectorStore(index=opened).add([TextNode(id_="l", text="llama", embedding=[1.0, 0, 0])])
        assert opened.search(vector=[0.1, 0.9, 0.0], k=1)[0].id == "h#0"
        assert opened.search(vector=[0.9, 0.1, 0.0], k=1)[0].id == "l#0"


class _Listed:
    """Index.search, counting the hits each call hands back (what a listing reads)."""

    def __init__(self, index: rcpkit.Index) -> None:
        self.search = index.search
        self.hits = 0
        self.calls = 0

    def __call__(self, *arguments: Any, **options: Any) -> Any:
        result = self.search(*arguments, **options)
        self.calls += 1
        self.hits += len(result.hits)
        return result


def _others(index: rcpkit.Index, count: int) -> None:
    """``count`` documents another client wrote, none of them through a framework."""
    index.add([{"id": f"other-{n}", "text": f"note {n} on ranking"} for n in range(count)])


def test_llamaindex_delete_lists_only_the_nodes_of_that_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding

    from rcpkit.integrations.llamaindex import RCPVectorStore

    with rcpkit.open(tmp_path / "idx", create=True, embedder=HASHING) as index:
        _others(index, 150)
        store = RCPVectorStore(index=index)
        documents = [Document(text=text, doc_id=key) for key, text in TEXTS.items()]
        VectorStoreIndex.from_documents(
            documents,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=MockEmbedding(embed_dim=8),
        )
        listed = _Listed(index)
        monkeypatch.setattr(index, "search", listed)
        store.delete("bm25")
        assert listed.hits == 1  # its one node, not the 154 the index holds
        left = {d.id for d in index.get([f"other-{n}" for n in range(150)])}
        assert len(left) == 150 and index.stats()["documents"] == 153


def test_haystack_count_and_duplicate_check_read_no_listing_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from haystack import Document
    from haystack.document_stores.errors import DuplicateDocumentError
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.document_stores.types import DuplicatePolicy

    from rcpkit.integrations.haystack import RCPDocumentStore

    with rcpkit.open(tmp_path / "idx", create=True, embedder=HASHING) as index:
        _others(index, 150)
        store, reference = RCPDocumentStore(index=index), InMemoryDocumentStore()
        listed = _Listed(index)
        monkeypatch.setattr(index, "search", listed)
        for target in (store, reference):
            target.write_documents([Document(id="a", content="alpha")])
            assert (
                target.write_documents([Document(id="a", content="again")], DuplicatePolicy.SKIP)
                == 0
            )
            with pytest.raises(DuplicateDocumentError):
                target.write_documents([Document(id="a", content="again")])
        assert (store.count_documents(), reference.count_documents()) == (151, 1)
        assert listed.calls == 0  # not one page of the 151 documents was read
