"""Capabilities (§6, §6.1): presence means supported, the value carries metadata."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from rcpkit.protocol.base import Count, Encoding, Modality, NonNegative, Unit, Wire

__all__ = [
    "Capabilities",
    "CatalogCapability",
    "EmbedCapability",
    "Empty",
    "FilterCapability",
    "GraphCapability",
    "IndexCapability",
    "LogCapability",
    "MemoryCapability",
    "MultiVectorCapability",
    "RerankCapability",
    "RetrieveCapability",
    "SessionCapability",
    "SparseEmbedCapability",
    "TransformCapability",
]

FilterFieldType = Literal["keyword", "text", "int", "float", "bool", "date", "geo"]
FilterOperator = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists"]


class Empty(Wire):
    """A capability whose presence is all it says (``streaming``, ``pagination``, …)."""


class EmbedCapability(Wire):
    dimension: Count
    identity: str
    batch_limit: Count | None = None
    normalized: bool | None = None
    modalities: list[Modality] | None = None
    encodings: list[Encoding] | None = None


class SparseEmbedCapability(Wire):
    identity: str
    vocabulary: Count | None = None


class MultiVectorCapability(Wire):
    dimension: Count
    identity: str
    similarity: Literal["dot", "cosine"] | None = None
    modalities: list[Modality] | None = None
    encodings: list[Encoding] | None = None


class RerankCapability(Wire):
    methods: list[Literal["cross-encoder", "colbert", "llm"]]
    max_candidates: Count | None = None
    models: list[str] | None = None
    # §4.8: "a server advertises the modalities it accepts per capability".
    modalities: list[Modality] | None = None


class RetrieveCapability(Wire):
    """§6.1: the ``retrieve`` capability metadata."""

    max_k: Count | None = None
    modes: list[Literal["dense", "sparse", "hybrid"]] | None = None
    modalities: list[Modality] | None = None
    fusion: list[Literal["rrf", "weighted", "convex"]] | None = None
    mmr: bool | None = None
    rerank_builtin: bool | None = None
    deterministic: bool | None = None
    snapshots: bool | None = None
    units: list[Unit] | None = None
    levels: Count | None = None
    token_budget: bool | None = None
    confidence: bool | None = None
    score_scale: Literal["cosine", "dot", "bm25", "probability", "unbounded"] | None = None
    score_floor: float | None = None
    default_mode: Literal["dense", "sparse", "hybrid"] | None = None
    recency: bool | None = None
    rewrite: bool | None = None
    encodings: list[Encoding] | None = None


class TransformCapability(Wire):
    methods: list[Literal["rewrite", "hyde", "multi-query", "decompose", "step-back"]]


class GraphCapability(Wire):
    ops: list[Literal["local", "global", "drift", "communities", "neighbors"]]
    max_hops: Count | None = None


class IndexCapability(Wire):
    writable: bool
    chunking: bool | None = None
    contextual: bool | None = None
    # §4.8: the block types an index/add document's `content` may hold.
    modalities: list[Modality] | None = None


class SessionCapability(Wire):
    dedup: bool | None = None
    ttl_seconds: NonNegative | None = None


class MemoryCapability(Wire):
    scopes: list[Literal["global", "session"]]
    clues: bool | None = None


class FilterCapability(Wire):
    fields: dict[str, FilterFieldType] | list[str]
    operators: list[FilterOperator] | None = None


class LogCapability(Wire):
    levels: list[Literal["debug", "info", "notice", "warning", "error"]] | None = None


class CatalogCapability(Wire):
    engines: NonNegative


class Capabilities(Wire):
    """§6: the capability set a server advertises. ``None`` means absent."""

    embed: EmbedCapability | None = None
    sparse_embed: SparseEmbedCapability | None = None
    multi_vector: MultiVectorCapability | None = None
    rerank: RerankCapability | None = None
    retrieve: RetrieveCapability | None = None
    transform: TransformCapability | None = None
    graph: GraphCapability | None = None
    index: IndexCapability | None = None
    session: SessionCapability | None = None
    feedback: Empty | None = None
    memory: MemoryCapability | None = None
    filter: FilterCapability | None = None
    streaming: Empty | None = None
    pagination: Empty | None = None
    citations: Empty | None = None
    log: LogCapability | None = None
    catalog: CatalogCapability | None = None

    def has(self, key: str) -> bool:
        """Whether the capability with wire name ``key`` is advertised."""
        attribute = _WIRE_TO_ATTRIBUTE.get(key)
        return attribute is not None and getattr(self, attribute) is not None

    def to_wire(self) -> dict[str, Any]:
        """The wire object (only present capabilities, each an object)."""
        wire: dict[str, Any] = msgspec.to_builtins(self)
        return wire


_WIRE_TO_ATTRIBUTE = {
    field.encode_name: field.name for field in msgspec.structs.fields(Capabilities)
}
