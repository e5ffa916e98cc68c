"""One decorator per RCP method, each typed with its params, result and capability.

Generated from the method registry (``protocol/methods.py``) and the capability
structs by ``python -m rcpkit.server._generate``; do not edit by hand.

A decorator's keywords are its method's capability metadata (snake_case; None
means "not advertised"), or ``capability=`` gives the whole object. ``mode``
says how the runtime calls the handler (``server/registration.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Count, NonNegative
from rcpkit.protocol.capabilities import (
    CatalogCapability,
    EmbedCapability,
    Empty,
    GraphCapability,
    IndexCapability,
    MemoryCapability,
    MultiVectorCapability,
    RerankCapability,
    RetrieveCapability,
    SparseEmbedCapability,
    TransformCapability,
)
from rcpkit.server.registration import Handler, HandlerMode, Registrar

__all__ = ["MethodDecorators"]

EmbedHandler = TypeVar("EmbedHandler", bound=Handler[m.EmbedParams, m.EmbedResult])
EmbedSparseHandler = TypeVar(
    "EmbedSparseHandler", bound=Handler[m.SparseEmbedParams, m.SparseEmbedResult]
)
EmbedMultiHandler = TypeVar(
    "EmbedMultiHandler", bound=Handler[m.MultiEmbedParams, m.MultiEmbedResult]
)
RerankHandler = TypeVar("RerankHandler", bound=Handler[m.RerankParams, m.RerankResult])
RetrieveHandler = TypeVar("RetrieveHandler", bound=Callable[..., Any])
QueryTransformHandler = TypeVar(
    "QueryTransformHandler", bound=Handler[m.TransformParams, m.TransformResult]
)
GraphHandler = TypeVar("GraphHandler", bound=Handler[m.GraphParams, m.GraphResult | Iterable[Any]])
IndexAddHandler = TypeVar("IndexAddHandler", bound=Handler[m.IndexAddParams, m.IndexAddResult])
IndexDeleteHandler = TypeVar(
    "IndexDeleteHandler", bound=Handler[m.IndexDeleteParams, m.IndexDeleteResult]
)
CatalogListHandler = TypeVar(
    "CatalogListHandler", bound=Handler[m.CatalogListParams, m.CatalogListResult]
)
FeedbackHandler = TypeVar("FeedbackHandler", bound=Handler[m.FeedbackParams, m.FeedbackResult])
MemoryBuildHandler = TypeVar(
    "MemoryBuildHandler", bound=Handler[m.MemoryBuildParams, m.MemoryBuildResult]
)
MemoryRecallHandler = TypeVar(
    "MemoryRecallHandler", bound=Handler[m.MemoryRecallParams, m.MemoryRecallResult]
)


class MethodDecorators(Registrar):
    """``App``'s decorators; each hands its keywords to ``App._register``."""

    def embed(
        self,
        *,
        dimension: Count | None = None,
        identity: str | None = None,
        batch_limit: Count | None = None,
        normalized: bool | None = None,
        modalities: Sequence[str] | None = None,
        encodings: Sequence[str] | None = None,
        capability: EmbedCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[EmbedHandler], EmbedHandler]:
        """§7.3 ``embed``: ``EmbedParams`` in, ``EmbedResult`` out."""
        return self._register("embed", locals())

    def embed_sparse(
        self,
        *,
        identity: str | None = None,
        vocabulary: Count | None = None,
        capability: SparseEmbedCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[EmbedSparseHandler], EmbedSparseHandler]:
        """§7.4 ``embed/sparse``: ``SparseEmbedParams`` in, ``SparseEmbedResult`` out."""
        return self._register("embed/sparse", locals())

    def embed_multi(
        self,
        *,
        dimension: Count | None = None,
        identity: str | None = None,
        similarity: str | None = None,
        modalities: Sequence[str] | None = None,
        encodings: Sequence[str] | None = None,
        capability: MultiVectorCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[EmbedMultiHandler], EmbedMultiHandler]:
        """§7.5 ``embed/multi``: ``MultiEmbedParams`` in, ``MultiEmbedResult`` out."""
        return self._register("embed/multi", locals())

    def rerank(
        self,
        *,
        methods: Sequence[str] | None = None,
        max_candidates: Count | None = None,
        models: Sequence[str] | None = None,
        modalities: Sequence[str] | None = None,
        capability: RerankCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[RerankHandler], RerankHandler]:
        """§7.6 ``rerank``: ``RerankParams`` in, ``RerankResult`` out."""
        return self._register("rerank", locals())

    def retrieve(
        self,
        *,
        max_k: Count | None = None,
        modes: Sequence[str] | None = None,
        modalities: Sequence[str] | None = None,
        fusion: Sequence[str] | None = None,
        mmr: bool | None = None,
        rerank_builtin: bool | None = None,
        deterministic: bool | None = None,
        snapshots: bool | None = None,
        units: Sequence[str] | None = None,
        levels: Count | None = None,
        token_budget: bool | None = None,
        confidence: bool | None = None,
        score_scale: str | None = None,
        score_floor: float | None = None,
        default_mode: str | None = None,
        recency: bool | None = None,
        rewrite: bool | None = None,
        encodings: Sequence[str] | None = None,
        filter: dict[str, str] | Sequence[str] | None = None,
        capability: RetrieveCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[RetrieveHandler], RetrieveHandler]:
        """§7.7 ``retrieve``: fields by name or ``RetrieveParams`` in, ``RetrieveResult`` out."""
        return self._register("retrieve", locals())

    def query_transform(
        self,
        *,
        methods: Sequence[str] | None = None,
        capability: TransformCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[QueryTransformHandler], QueryTransformHandler]:
        """§7.8 ``query/transform``: ``TransformParams`` in, ``TransformResult`` out."""
        return self._register("query/transform", locals())

    def graph(
        self,
        *,
        ops: Sequence[str] | None = None,
        max_hops: Count | None = None,
        capability: GraphCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[GraphHandler], GraphHandler]:
        """§7.9 ``graph``: ``GraphParams`` in, ``GraphResult`` out."""
        return self._register("graph", locals())

    def index_add(
        self,
        *,
        writable: bool | None = None,
        chunking: bool | None = None,
        contextual: bool | None = None,
        modalities: Sequence[str] | None = None,
        capability: IndexCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[IndexAddHandler], IndexAddHandler]:
        """§7.10 ``index/add``: ``IndexAddParams`` in, ``IndexAddResult`` out."""
        return self._register("index/add", locals())

    def index_delete(
        self,
        *,
        writable: bool | None = None,
        chunking: bool | None = None,
        contextual: bool | None = None,
        modalities: Sequence[str] | None = None,
        capability: IndexCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[IndexDeleteHandler], IndexDeleteHandler]:
        """§7.11 ``index/delete``: ``IndexDeleteParams`` in, ``IndexDeleteResult`` out."""
        return self._register("index/delete", locals())

    def catalog_list(
        self,
        *,
        engines: NonNegative | None = None,
        capability: CatalogCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[CatalogListHandler], CatalogListHandler]:
        """§7.13 ``catalog/list``: ``CatalogListParams`` in, ``CatalogListResult`` out."""
        return self._register("catalog/list", locals())

    def feedback(
        self,
        *,
        capability: Empty | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[FeedbackHandler], FeedbackHandler]:
        """§7.16 ``feedback``: ``FeedbackParams`` in, ``FeedbackResult`` out."""
        return self._register("feedback", locals())

    def memory_build(
        self,
        *,
        scopes: Sequence[str] | None = None,
        clues: bool | None = None,
        capability: MemoryCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[MemoryBuildHandler], MemoryBuildHandler]:
        """§7.17 ``memory/build``: ``MemoryBuildParams`` in, ``MemoryBuildResult`` out."""
        return self._register("memory/build", locals())

    def memory_recall(
        self,
        *,
        scopes: Sequence[str] | None = None,
        clues: bool | None = None,
        capability: MemoryCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[MemoryRecallHandler], MemoryRecallHandler]:
        """§7.17 ``memory/recall``: ``MemoryRecallParams`` in, ``MemoryRecallResult`` out."""
        return self._register("memory/recall", locals())
