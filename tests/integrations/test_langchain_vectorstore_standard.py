"""LangChain's standard VectorStore suite on RCPVectorStore, on an index of the suite's
own embeddings (``DeterministicFakeEmbedding``, dimension 6): in process, and over a
real HTTP ``rcpkit serve`` of such an index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from integrations_support import http_server
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests.vectorstores import (
    EMBEDDING_SIZE,
    VectorStoreIntegrationTests,
)

import rcpkit
from rcpkit.integrations import Connection
from rcpkit.integrations._retrieval import every_hit
from rcpkit.integrations.langchain import RCPVectorStore


class TestRCPVectorStoreInProcess(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        with rcpkit.open(tmp_path / "lc", create=True, vectors=EMBEDDING_SIZE) as index:
            store = RCPVectorStore(self.get_embeddings(), index=index)
            yield store
            store.close()


@pytest.fixture(scope="module")
def own_vectors_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the suite (each test starts from an empty index, see below)."""
    where = tmp_path_factory.mktemp("lc-server") / "index"
    rcpkit.open(where, create=True, vectors=EMBEDDING_SIZE).close()
    with http_server(where, embedder=None) as url:
        yield url


class TestRCPVectorStoreOverAServer(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, own_vectors_server: str) -> Iterator[VectorStore]:  # type: ignore[override]
        store = RCPVectorStore(self.get_embeddings(), url=own_vectors_server)
        try:
            yield store
        finally:
            # The suite wants an empty store per test: delete what this one wrote.
            with Connection.http(own_vectors_server) as connection:
                written = {hit.chunk.doc_id for hit in every_hit(connection, None) if hit.chunk}
                if written:
                    connection.client.index_delete(sorted(written))
            store.close()
