"""LangChain's standard VectorStore suite on RCPVectorStore, in process on an index of
the suite's own embeddings (``DeterministicFakeEmbedding``, dimension 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests.vectorstores import (
    EMBEDDING_SIZE,
    VectorStoreIntegrationTests,
)

import rcpkit
from rcpkit.integrations.langchain import RCPVectorStore


class TestRCPVectorStoreInProcess(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, tmp_path: Path) -> Iterator[VectorStore]:  # type: ignore[override]
        with rcpkit.open(tmp_path / "lc", create=True, vectors=EMBEDDING_SIZE) as index:
            store = RCPVectorStore(self.get_embeddings(), index=index)
            yield store
            store.close()
