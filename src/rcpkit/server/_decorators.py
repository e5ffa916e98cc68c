"""One decorator per RCP method, each typed with its params, result and capability.

Generated from the method registry (``protocol/methods.py``) and the capability
structs by ``python -m rcpkit.server._generate``; do not edit by hand.

A decorator's keywords are its method's capability metadata (snake_case; None
means "not advertised"), or ``capability=`` gives the whole object. ``mode``
says how the runtime calls the handler (``server/registration.py``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, TypeVar

from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Count, NonNegative, Wire
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
from rcpkit.server.context import RequestContext
from rcpkit.server.registration import HandlerMode

__all__ = ["MethodDecorators"]

P = TypeVar("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

# A typed-tier handler: ``(params)`` or ``(params, ctx)``, plain or async; it may
# return the result struct or a mapping in the result's wire shape.
Handler: TypeAlias = (
    Callable[[P], R | Mapping[str, Any] | Awaitable[R | Mapping[str, Any]]]
    | Callable[[P, RequestContext], R | Mapping[str, Any] | Awaitable[R | Mapping[str, Any]]]
)

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


class MethodDecorators(ABC):
    """``App``'s decorators; ``method`` (the generic registration) is ``App``'s."""

    @abstractmethod
    def method(
        self,
        name: str,
        *,
        mode: HandlerMode | None = None,
        capability: Wire | dict[str, Any] | None = None,
        **metadata: Any,
    ) -> Callable[[F], F]:
        """Register the decorated function for the method ``name`` (App.method)."""

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
        """Register the ``embed`` handler (§7.3).

        It takes ``EmbedParams`` (and the ``RequestContext``) and returns
        ``EmbedResult``; the keywords are the ``embed`` capability's.
        """
        return self.method(
            "embed",
            mode=mode,
            capability=capability,
            **_given(
                dimension=dimension,
                identity=identity,
                batch_limit=batch_limit,
                normalized=normalized,
                modalities=modalities,
                encodings=encodings,
            ),
        )

    def embed_sparse(
        self,
        *,
        identity: str | None = None,
        vocabulary: Count | None = None,
        capability: SparseEmbedCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[EmbedSparseHandler], EmbedSparseHandler]:
        """Register the ``embed/sparse`` handler (§7.4).

        It takes ``SparseEmbedParams`` (and the ``RequestContext``) and returns
        ``SparseEmbedResult``; the keywords are the ``sparseEmbed`` capability's.
        """
        return self.method(
            "embed/sparse",
            mode=mode,
            capability=capability,
            **_given(
                identity=identity,
                vocabulary=vocabulary,
            ),
        )

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
        """Register the ``embed/multi`` handler (§7.5).

        It takes ``MultiEmbedParams`` (and the ``RequestContext``) and returns
        ``MultiEmbedResult``; the keywords are the ``multiVector`` capability's.
        """
        return self.method(
            "embed/multi",
            mode=mode,
            capability=capability,
            **_given(
                dimension=dimension,
                identity=identity,
                similarity=similarity,
                modalities=modalities,
                encodings=encodings,
            ),
        )

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
        """Register the ``rerank`` handler (§7.6).

        It takes ``RerankParams`` (and the ``RequestContext``) and returns
        ``RerankResult``; the keywords are the ``rerank`` capability's.
        """
        return self.method(
            "rerank",
            mode=mode,
            capability=capability,
            **_given(
                methods=methods,
                max_candidates=max_candidates,
                models=models,
                modalities=modalities,
            ),
        )

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
        """Register the ``retrieve`` handler (§7.7).

        It takes fields by name or ``RetrieveParams`` (and the ``RequestContext``) and returns
        ``RetrieveResult``; the keywords are the ``retrieve`` capability's.
        """
        return self.method(
            "retrieve",
            mode=mode,
            capability=capability,
            **_given(
                max_k=max_k,
                modes=modes,
                modalities=modalities,
                fusion=fusion,
                mmr=mmr,
                rerank_builtin=rerank_builtin,
                deterministic=deterministic,
                snapshots=snapshots,
                units=units,
                levels=levels,
                token_budget=token_budget,
                confidence=confidence,
                score_scale=score_scale,
                score_floor=score_floor,
                default_mode=default_mode,
                recency=recency,
                rewrite=rewrite,
                encodings=encodings,
                filter=filter,
            ),
        )

    def query_transform(
        self,
        *,
        methods: Sequence[str] | None = None,
        capability: TransformCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[QueryTransformHandler], QueryTransformHandler]:
        """Register the ``query/transform`` handler (§7.8).

        It takes ``TransformParams`` (and the ``RequestContext``) and returns
        ``TransformResult``; the keywords are the ``transform`` capability's.
        """
        return self.method(
            "query/transform",
            mode=mode,
            capability=capability,
            **_given(
                methods=methods,
            ),
        )

    def graph(
        self,
        *,
        ops: Sequence[str] | None = None,
        max_hops: Count | None = None,
        capability: GraphCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[GraphHandler], GraphHandler]:
        """Register the ``graph`` handler (§7.9).

        It takes ``GraphParams`` (and the ``RequestContext``) and returns
        ``GraphResult``; the keywords are the ``graph`` capability's.
        """
        return self.method(
            "graph",
            mode=mode,
            capability=capability,
            **_given(
                ops=ops,
                max_hops=max_hops,
            ),
        )

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
        """Register the ``index/add`` handler (§7.10).

        It takes ``IndexAddParams`` (and the ``RequestContext``) and returns
        ``IndexAddResult``; the keywords are the ``index`` capability's.
        """
        return self.method(
            "index/add",
            mode=mode,
            capability=capability,
            **_given(
                writable=writable,
                chunking=chunking,
                contextual=contextual,
                modalities=modalities,
            ),
        )

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
        """Register the ``index/delete`` handler (§7.11).

        It takes ``IndexDeleteParams`` (and the ``RequestContext``) and returns
        ``IndexDeleteResult``; the keywords are the ``index`` capability's.
        """
        return self.method(
            "index/delete",
            mode=mode,
            capability=capability,
            **_given(
                writable=writable,
                chunking=chunking,
                contextual=contextual,
                modalities=modalities,
            ),
        )

    def catalog_list(
        self,
        *,
        engines: NonNegative | None = None,
        capability: CatalogCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[CatalogListHandler], CatalogListHandler]:
        """Register the ``catalog/list`` handler (§7.13).

        It takes ``CatalogListParams`` (and the ``RequestContext``) and returns
        ``CatalogListResult``; the keywords are the ``catalog`` capability's.
        """
        return self.method(
            "catalog/list",
            mode=mode,
            capability=capability,
            **_given(
                engines=engines,
            ),
        )

    def feedback(
        self,
        *,
        capability: Empty | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[FeedbackHandler], FeedbackHandler]:
        """Register the ``feedback`` handler (§7.16).

        It takes ``FeedbackParams`` (and the ``RequestContext``) and returns
        ``FeedbackResult``; the keywords are the ``feedback`` capability's.
        """
        return self.method(
            "feedback",
            mode=mode,
            capability=capability,
        )

    def memory_build(
        self,
        *,
        scopes: Sequence[str] | None = None,
        clues: bool | None = None,
        capability: MemoryCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[MemoryBuildHandler], MemoryBuildHandler]:
        """Register the ``memory/build`` handler (§7.17).

        It takes ``MemoryBuildParams`` (and the ``RequestContext``) and returns
        ``MemoryBuildResult``; the keywords are the ``memory`` capability's.
        """
        return self.method(
            "memory/build",
            mode=mode,
            capability=capability,
            **_given(
                scopes=scopes,
                clues=clues,
            ),
        )

    def memory_recall(
        self,
        *,
        scopes: Sequence[str] | None = None,
        clues: bool | None = None,
        capability: MemoryCapability | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> Callable[[MemoryRecallHandler], MemoryRecallHandler]:
        """Register the ``memory/recall`` handler (§7.17).

        It takes ``MemoryRecallParams`` (and the ``RequestContext``) and returns
        ``MemoryRecallResult``; the keywords are the ``memory`` capability's.
        """
        return self.method(
            "memory/recall",
            mode=mode,
            capability=capability,
            **_given(
                scopes=scopes,
                clues=clues,
            ),
        )


def _given(**metadata: Any) -> dict[str, Any]:
    """The metadata keywords a caller set (None means "not advertised", §6), lists as lists."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in metadata.items()
        if value is not None
    }
