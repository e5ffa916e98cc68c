"""LangChain: :class:`RCPRetriever`, a ``BaseRetriever`` over any RCP server, and
:class:`RCPVectorStore`, a ``VectorStore`` that keeps your ``Embeddings``.

Install with ``pip install 'rcpkit[langchain]'``.

>>> retriever = RCPRetriever(url="http://127.0.0.1:8080/rcp", token="…", k=5, mode="hybrid")
>>> docs = retriever.invoke("reciprocal rank fusion", k=3, filter={"field": "lang", "op": "eq",
...                                                              "value": "en"})
>>> docs = await retriever.ainvoke("bm25")
>>> retriever = RCPRetriever(index="./idx", k=5)   # in process: no server (rcpkit.open)

``k`` and ``filter`` (a §8 tree) may be given at call time. Each Document's
``metadata`` carries the hit's id, score, confidence, citation (source, uri,
start/end, page) and trust flags beside the server's own metadata.
Errors are the client's :class:`~rcpkit.RCPError` subclasses; a capability the
server does not advertise raises ``CapabilityMissing`` naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from rcpkit.integrations._connect import Connection
from rcpkit.integrations._langchain_store import RCPVectorStore
from rcpkit.integrations._local import connection_from
from rcpkit.integrations._retrieval import Passthrough, hit_metadata, retrieve, retrieve_async
from rcpkit.protocol.content import Hit
from rcpkit.protocol.messages import RetrieveMode

__all__ = ["RCPRetriever", "RCPVectorStore"]


class RCPRetriever(BaseRetriever):
    """Documents from an RCP server's ``retrieve`` (§7.7), sync or native async."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    connection: Connection | None = None
    """A shared :class:`~rcpkit.integrations.Connection`; else one of these three:"""
    command: Sequence[str] | None = None
    url: str | None = None
    token: str | None = Field(default=None, repr=False)
    registry: str | None = None
    engine: str | None = None
    timeout: float | None = 60.0
    index: Any = None
    """In process instead: a folder, a database URL or an opened ``rcpkit.Index``."""

    k: int = 4
    filter: dict[str, Any] | None = None
    """A §8 filter tree, applied to every call unless the call gives its own."""
    mode: RetrieveMode | None = None
    fusion: dict[str, Any] | None = None
    rerank: dict[str, Any] | bool | None = None
    token_budget: int | None = None
    candidate_k: int | None = None
    min_score: float | None = None

    _connection: Connection = PrivateAttr()

    @field_validator("filter", mode="before")
    @classmethod
    def _a_tree(cls, value: object) -> object:
        return _filter_tree(value)

    @model_validator(mode="after")
    def _connect_lazily(self) -> RCPRetriever:
        self._connection = connection_from(
            self.connection,
            command=self.command,
            url=self.url,
            token=self.token,
            registry=self.registry,
            engine=self.engine,
            timeout=self.timeout,
            index=self.index,
        )
        return self

    def _call(self, k: int | None, filter: Mapping[str, Any] | None) -> tuple[int, Any]:
        return (self.k if k is None else k), _filter_tree(self.filter if filter is None else filter)

    def _passthrough(self) -> Passthrough:
        return Passthrough(
            mode=self.mode,
            fusion=self.fusion,
            rerank=self.rerank,
            token_budget=self.token_budget,
            candidate_k=self.candidate_k,
            min_score=self.min_score,
        )

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        count, tree = self._call(k, filter)
        hits = retrieve(self._connection, query, count, tree, self._passthrough())
        return [_document(hit) for hit in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        filter: Mapping[str, Any] | None = None,
    ) -> list[Document]:
        count, tree = self._call(k, filter)
        hits = await retrieve_async(self._connection, query, count, tree, self._passthrough())
        return [_document(hit) for hit in hits]

    def close(self) -> None:
        """Close the connection this retriever opened (a shared one is the caller's)."""
        if self.connection is None:
            self._connection.close()


def _filter_tree(value: object) -> dict[str, Any] | None:
    """A §8 filter tree as given, or a ValueError naming the shape expected."""
    if value is None or isinstance(value, Mapping):
        return dict(value) if value is not None else None
    raise ValueError(
        "`filter` must be a §8 filter tree: a dict such as "
        '{"field": "lang", "op": "eq", "value": "en"} or {"and": [...]}, '
        f"not a {type(value).__name__} ({value!r})"
    )


def _document(hit: Hit) -> Document:
    return Document(page_content=hit.text or "", metadata=hit_metadata(hit), id=str(hit.id))
