"""Querying an index of your own vectors with the framework's own query embedding.

The "user's embedder" here is three explicit axes (one per topic word), so the
vector alone decides: no query text shares a word with the document it must find.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import rcpkit
from rcpkit.integrations import Connection
from rcpkit.protocol.errors import RCPError

AXES = ("walrus", "glacier", "volcano")
TEXTS = {
    "w": "walrus colonies haul out on ice floes",
    "g": "glacier tongues calve into the fjord",
    "v": "volcano vents release sulphur gases",
}


def embed(text: str) -> list[float]:
    """The user's embedder: a topic word per axis (and a little of every axis)."""
    return [1.0 if axis in text else 0.05 for axis in AXES]


@pytest.fixture
def own(tmp_path: Path) -> Path:
    where = tmp_path / "own"
    with rcpkit.open(where, create=True, vectors=len(AXES)) as index:
        index.add(
            [{"id": key, "text": text, "meta": {"key": key}} for key, text in TEXTS.items()],
            vectors=[embed(text) for text in TEXTS.values()],
        )
    return where


def test_llamaindex_vector_store_index_with_an_embed_model_retrieves_by_its_vectors(
    tmp_path: Path,
) -> None:
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding

    from rcpkit.integrations.llamaindex import RCPVectorStore

    class Topics(BaseEmbedding):  # type: ignore[misc]
        def _get_query_embedding(self, query: str) -> list[float]:
            return embed(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return embed(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return embed(query)

    with rcpkit.open(tmp_path / "li", create=True, vectors=len(AXES)) as opened:
        store = RCPVectorStore(index=opened)
        assert store.is_embedding_query  # the embed model's vectors, not the index's
        index = VectorStoreIndex.from_documents(
            [Document(text=text, id_=key) for key, text in TEXTS.items()],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=Topics(),
        )
        # "volcano" is in the embedding's axis only: no word of the query is in the text.
        nodes = index.as_retriever(similarity_top_k=1).retrieve("which volcano")
        assert nodes[0].node.get_content() == TEXTS["v"]
        nodes = index.as_retriever(similarity_top_k=1).retrieve("a walrus question")
        assert nodes[0].node.get_content() == TEXTS["w"]


class _Topics:
    """LlamaIndex's embed model over the explicit axes, counting its query embeddings."""

    @staticmethod
    def model() -> Any:
        from llama_index.core.embeddings import BaseEmbedding

        class Topics(BaseEmbedding):  # type: ignore[misc]
            queries: int = 0

            def _get_query_embedding(self, query: str) -> list[float]:
                self.queries += 1
                return embed(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return embed(text)

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

        return Topics()


def test_llamaindex_vector_store_index_over_a_server_queries_by_the_embed_model(
    own: Path,
) -> None:
    from llama_index.core import Document, StorageContext, VectorStoreIndex

    from rcpkit.integrations.llamaindex import RCPVectorStore

    connection = _serve(own)
    try:
        store = RCPVectorStore(connection)  # no is_embedding_query: the server's index says
        model = _Topics.model()
        index = VectorStoreIndex.from_documents(
            [Document(text="lava fields cool slowly", id_="lava")],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=model,
        )
        # No word of either query is in the text it must find: the query's vector did it.
        nodes = index.as_retriever(similarity_top_k=1).retrieve("which volcano")
        assert nodes[0].node.get_content() == TEXTS["v"]
        nodes = index.as_retriever(similarity_top_k=1).retrieve("a glacier question")
        assert nodes[0].node.get_content() == TEXTS["g"]
        assert model.queries == 2
    finally:
        connection.close()


def test_llamaindex_over_a_server_with_its_own_model_never_embeds_the_query(
    tmp_path: Path,
) -> None:
    from llama_index.core import Document, StorageContext, VectorStoreIndex

    from rcpkit.integrations.llamaindex import RCPVectorStore

    with rcpkit.open(tmp_path / "model", create=True, embedder="hashing:64"):
        pass
    connection = _serve(tmp_path / "model")
    try:
        store = RCPVectorStore(connection)
        model = _Topics.model()
        index = VectorStoreIndex.from_documents(
            [Document(text=text, id_=key) for key, text in TEXTS.items()],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=model,
        )
        nodes = index.as_retriever(similarity_top_k=1).retrieve("glacier tongues")
        assert nodes[0].node.get_content() == TEXTS["g"]
        assert model.queries == 0  # the server embeds the query text itself
    finally:
        connection.close()


def test_haystack_embedding_retriever_and_listing_on_own_vectors(own: Path) -> None:
    from haystack import Document

    from rcpkit.integrations.haystack import RCPDocumentStore, RCPEmbeddingRetriever

    store = RCPDocumentStore(index=str(own))
    try:
        # Listing (count, filter, the FAIL policy's check) needs no text embedding.
        assert store.count_documents() == 3
        assert [
            doc.id
            for doc in store.filter_documents({"field": "meta.key", "operator": "==", "value": "g"})
        ] == ["g"]
        store.write_documents([Document(id="x", content="lava", embedding=embed("volcano"))])
        assert store.count_documents() == 4
        retriever = RCPEmbeddingRetriever(document_store=store, top_k=2)
        found = retriever.run(query_embedding=embed("glacier"))["documents"]
        assert found[0].id == "g"
        hybrid = retriever.run(query_embedding=embed("volcano"), query="lava")["documents"]
        assert hybrid[0].id == "x"
    finally:
        store.connection.close()


def _serve(index: Path) -> Connection:
    return Connection.stdio([sys.executable, "-m", "rcpkit", "serve", "--index", str(index)])


def test_a_query_vector_over_rcp_is_a_declared_extension(own: Path) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from rcpkit.integrations.llamaindex import RCPVectorStore

    connection = _serve(own)
    try:
        declared = connection.client.client.meta.get("retrieveParams")
        store = RCPVectorStore(connection, is_embedding_query=True)
        query = VectorStoreQuery(query_embedding=embed("glacier"), similarity_top_k=1)
        result = store.query(query)
        assert result.ids == ["g"]
        with pytest.raises(RCPError) as wrong:
            connection.client.retrieve("x", vector=[1.0, 0.0])
        assert wrong.value.code == -32602 and "dimension" in str(wrong.value)
    finally:
        connection.close()
    assert declared == {"extensions": ["vector"]}


def test_a_query_vector_is_refused_by_an_index_with_its_own_model(tmp_path: Path) -> None:
    with rcpkit.open(tmp_path / "model", create=True, embedder="hashing:3") as index:
        index.add([{"id": "a", "text": "walrus"}])
    connection = _serve(tmp_path / "model")
    try:
        with pytest.raises(RCPError) as refused:
            connection.client.retrieve("walrus", vector=[1.0, 0.0, 0.0])
        assert refused.value.code == -32602 and "own vectors" in str(refused.value)
        assert connection.client.retrieve("walrus").hits[0].id == "a#0"
    finally:
        connection.close()


class Topics:
    """LangChain ``Embeddings``: the same explicit axes."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return embed(text)


def test_langchain_vector_store_keeps_the_user_s_embeddings(own: Path) -> None:
    from rcpkit.integrations.langchain import RCPVectorStore

    with rcpkit.open(own) as opened:
        store = RCPVectorStore.from_texts(
            ["icebergs drift south", "lava fields cool"],
            Topics(),  # type: ignore[arg-type]
            metadatas=[{"topic": "glacier", "n": [1, 2]}, {"topic": "volcano"}],
            ids=["ice", "lava"],
            index=opened,
        )
        # No word of "which glacier" is in "icebergs drift south": the vector found it.
        found = store.similarity_search("which glacier", k=2, filter={"topic": "glacier"})
        assert [(doc.id, doc.metadata) for doc in found] == [
            ("ice", {"topic": "glacier", "n": [1, 2]})
        ]
        assert store.similarity_search_by_vector(embed("volcano"), k=1)[0].id == "v"
        assert store.delete(None) is None  # as InMemoryVectorStore: nothing, never all
        assert opened.stats()["documents"] == 5
        store.delete(["ice", "lava"])
        assert opened.stats()["documents"] == 3  # the documents written before stay


def test_langchain_vector_store_on_an_index_with_its_own_model(tmp_path: Path) -> None:
    from rcpkit.integrations.langchain import RCPVectorStore

    with rcpkit.open(tmp_path / "model", create=True, embedder="hashing:64") as opened:
        store = RCPVectorStore.from_texts(
            ["walrus on the ice", "lava flows"],
            Topics(),  # type: ignore[arg-type]
            ids=["w", "l"],
            index=opened,
        )
        assert store.similarity_search("walrus", k=1)[0].id == "w"  # the index embeds
        with pytest.raises(ValueError, match="own model"):
            store.similarity_search_by_vector(embed("walrus"), k=1)


def test_langchain_get_by_ids_over_a_server_reads_those_documents_only(
    own: Path, tmp_path: Path
) -> None:
    import json

    from rcpkit.integrations.langchain import RCPVectorStore

    log = tmp_path / "access.jsonl"
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(own)]
    connection = Connection.stdio([*command, "--access-log", str(log)])
    store = RCPVectorStore(Topics(), connection)  # type: ignore[arg-type]
    try:
        store.add_texts(["icebergs drift south"], [{"topic": "glacier"}], ids=["ice"])
        found = store.get_by_ids(["ice", "absent", "g"])
    finally:
        connection.close()
    assert [(doc.id, doc.page_content, doc.metadata) for doc in found] == [
        ("ice", "icebergs drift south", {"topic": "glacier"}),
        ("g", TEXTS["g"], {"key": "g"}),
    ]
    methods = [json.loads(line)["method"] for line in log.read_text().splitlines()]
    # Read by id, one call each; the index (its four documents) was never listed.
    assert "retrieve" not in methods
    assert methods.count("x-rcpkit/document") == 3


def test_index_get_reads_documents_by_id_in_process(own: Path) -> None:
    with rcpkit.open(own) as index:
        found = index.get(["v", "nothing", "w"])
        assert [(d.id, d.text, d.meta) for d in found] == [
            ("v", TEXTS["v"], {"key": "v"}),
            ("w", TEXTS["w"], {"key": "w"}),
        ]
        with pytest.raises(rcpkit.LibraryError, match="strings"):
            index.get([3])  # type: ignore[list-item]
