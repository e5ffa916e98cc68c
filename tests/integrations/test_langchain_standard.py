"""LangChain's own standard suite for retrievers, against a real rcpkit server."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import RetrieversIntegrationTests

from rcpkit.integrations.langchain import RCPRetriever


class TestRCPRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _server(self, corpus_url: str) -> None:
        self.url = corpus_url

    @property
    def retriever_constructor(self) -> type[RCPRetriever]:
        return RCPRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"url": self.url, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "how does fusion matter for retrieval"


class TestRCPRetrieverStandardInProcess(RetrieversIntegrationTests):
    """The same suite in process: ``index=`` a folder holding the same corpus."""

    @pytest.fixture(autouse=True)
    def _index(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        from integrations_support import corpus

        import rcpkit

        self.folder = str(tmp_path_factory.mktemp("in-process") / "idx")
        with rcpkit.open(self.folder, create=True, embedder="hashing:64") as index:
            index.add(corpus(), chunk=False)

    @property
    def retriever_constructor(self) -> type[RCPRetriever]:
        return RCPRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"index": self.folder, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "how does fusion matter for retrieval"
