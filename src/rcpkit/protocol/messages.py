"""Params and result types of every method of §7, and the notifications."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from rcpkit.protocol.base import (
    Count,
    Cursor,
    DocumentId,
    Encoding,
    Id,
    KeptText,
    Kind,
    Meta,
    Modality,
    NonNegative,
    Token,
    Unit,
    UnitFloat,
    Wire,
)
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.content import Content, Edge, Hit, QueryInput, TextInput

__all__ = [
    "CancelParams",
    "CatalogEngine",
    "CatalogListParams",
    "CatalogListResult",
    "Clue",
    "Community",
    "Document",
    "EmbedParams",
    "EmbedResult",
    "EmptyParams",
    "EmptyResult",
    "FeedbackParams",
    "FeedbackResult",
    "FeedbackSignal",
    "Filter",
    "Fusion",
    "GraphEdge",
    "GraphNode",
    "GraphOp",
    "GraphParams",
    "GraphResult",
    "IndexAddParams",
    "IndexAddResult",
    "IndexDeleteParams",
    "IndexDeleteResult",
    "InfoParams",
    "InitializeParams",
    "InitializeResult",
    "LogParams",
    "MemoryBuildParams",
    "MemoryBuildResult",
    "MemoryDocument",
    "MemoryRecallParams",
    "MemoryRecallResult",
    "Mmr",
    "MultiEmbedParams",
    "MultiEmbedResult",
    "PeerInfo",
    "PingParams",
    "PingResult",
    "ProgressParams",
    "Recency",
    "RerankOption",
    "RerankParams",
    "RerankResult",
    "RerankedIndex",
    "RetrieveMode",
    "RetrieveParams",
    "RetrieveResult",
    "RewriteMethod",
    "SPEC_DOCUMENT_FIELDS",
    "ShutdownParams",
    "SparseEmbedParams",
    "SparseEmbedResult",
    "SparseVector",
    "TransformParams",
    "TransformResult",
    "Usage",
    "index_document_extension",
]

# §8: a filter is a boolean tree of clauses; it is validated against the
# advertised fields by the filter module, so here it is only "an object".
Filter = dict[str, Any]


class EmptyParams(Wire):
    pass


class EmptyResult(Wire):
    pass


# --- lifecycle: initialize, info, ping, shutdown (§7.1, §7.2, §7.12, §7.15) ---


class PeerInfo(Wire):
    name: str
    version: str


class InitializeParams(Wire):
    # §7.1: validated as an integer only; a version below 1 is -32002, not -32602.
    protocol_version: int
    client: PeerInfo | None = None
    # §7.1: client capabilities are hints; their values are never rejected.
    capabilities: dict[str, Any] | None = None


class InitializeResult(Wire):
    protocol_version: int
    server: PeerInfo
    capabilities: Capabilities
    meta: Meta | None = msgspec.field(default=None, name="_meta")


class InfoParams(EmptyParams):
    pass


class PingParams(Wire):
    nonce: str | int | float | None = None


class PingResult(Wire):
    nonce: str | int | float | None = None


class ShutdownParams(EmptyParams):
    pass


# --- embed, embed/sparse, embed/multi (§7.3–§7.5) ---


class EmbedParams(Wire):
    inputs: list[TextInput] | None = None
    texts: list[TextInput] | None = None  # §7.3: legacy synonym of inputs
    kind: Kind | None = None
    encoding: Encoding | None = None

    def __post_init__(self) -> None:
        if self.inputs is None and self.texts is None:
            raise ValueError("`inputs` is required")

    @property
    def items(self) -> list[TextInput]:
        """The inputs, whichever of the two field names carried them."""
        return self.inputs if self.inputs is not None else (self.texts or [])


class EmbedResult(Wire):
    # list[list[float]] for "json", list[str] (base64 blobs) for "f32-base64".
    vectors: list[Any]
    encoding: Encoding | None = None
    dimension: Count | None = None
    usage: Usage | None = None  # §17.2's telemetry, e.g. an image input read by OCR


class SparseEmbedParams(EmbedParams):
    pass


class SparseVector(Wire):
    indices: list[NonNegative]
    values: list[float]


class SparseEmbedResult(Wire):
    sparse: list[SparseVector]


class MultiEmbedParams(EmbedParams):
    pass


class MultiEmbedResult(Wire):
    # One matrix per input: list[list[float]] rows, or one base64 blob of rows.
    matrices: list[Any]
    dimension: Count
    encoding: Encoding | None = None


# --- rerank (§7.6) ---


class RerankParams(Wire):
    query: QueryInput
    passages: list[TextInput] | None = None
    documents: list[TextInput] | None = None  # the reference SDK's variant
    method: Literal["cross-encoder", "colbert", "llm"] | None = None
    model: str | None = None
    top_n: Count | None = None

    def __post_init__(self) -> None:
        if self.passages is None and self.documents is None:
            raise ValueError("`passages` is required")

    @property
    def items(self) -> list[TextInput]:
        return self.passages if self.passages is not None else (self.documents or [])


class RerankedIndex(Wire):
    index: NonNegative
    score: float


class RerankResult(Wire):
    scores: list[float]
    order: list[NonNegative] | None = None
    results: list[RerankedIndex] | None = None
    usage: Usage | None = None  # §17.2


# --- retrieve (§7.7) ---


class Fusion(Wire):
    method: Literal["rrf", "weighted", "convex"] | None = None
    weights: dict[str, float] | None = None
    rrf_k: Count | None = None
    alpha: UnitFloat | None = None


class RerankOption(Wire):
    method: Literal["cross-encoder", "colbert", "llm"] | None = None
    model: str | None = None
    top_n: Count | None = None


class Mmr(Wire):
    lambda_: UnitFloat = msgspec.field(default=0.5, name="lambda")


class Recency(Wire):
    field: str
    half_life_days: float

    def __post_init__(self) -> None:
        if not self.half_life_days > 0:
            raise ValueError("`halfLifeDays` must be > 0")


# §7.7: the values a client may name (the client's typed keywords use these too).
RetrieveMode = Literal["dense", "sparse", "hybrid"]
RewriteMethod = Literal["rewrite", "hyde", "multi-query", "decompose", "step-back"]


class RetrieveParams(Wire):
    query: QueryInput
    k: Count = 10
    mode: RetrieveMode | None = None
    modality: Modality | None = None
    candidate_k: Count | None = None
    fusion: Fusion | None = None
    # §7.7: an object, or `false` to switch reranking off.
    rerank: RerankOption | bool | None = None
    mmr: Mmr | None = None
    rewrite: RewriteMethod | bool | None = None
    filter: Filter | None = None
    min_score: float | None = None
    recency: Recency | None = None
    unit: Unit | None = None
    level: NonNegative | None = None
    token_budget: Count | None = None
    session_id: Token | None = None
    include_text: bool | None = None
    include_vectors: bool | None = None
    encoding: Encoding | None = None
    seed: int | None = None
    index_version: Token | None = None
    strict: bool | None = None
    cursor: Cursor | None = None
    # rcpkit: the query's own vector for the dense arm, on an index of your own vectors
    # (declared in ``initialize``'s ``_meta.retrieveParams``, §4.4, §6.2).
    vector: list[float] | None = None

    def __post_init__(self) -> None:
        if self.rerank is True:
            raise ValueError("`rerank` is an object or false")
        if self.rewrite is True:
            raise ValueError("`rewrite` is a method name or false")


class Usage(Wire):
    candidates: NonNegative | None = None
    reranked: NonNegative | None = None
    latency_ms: float | None = None
    tokens: NonNegative | None = None
    notes: list[str] | None = None
    stages: dict[str, float] | None = None


class RetrieveResult(Wire):
    hits: list[Hit]
    next_cursor: str | None = None
    index_version: str | None = None
    usage: Usage | None = None
    rewritten_query: str | None = None
    meta: Meta | None = msgspec.field(default=None, name="_meta")  # e.g. degraded (§16.2)


# --- query/transform (§7.8) and graph (§7.9) ---


class TransformParams(Wire):
    query: QueryInput
    method: Literal["rewrite", "hyde", "multi-query", "decompose", "step-back"]
    n: Count | None = None


class TransformResult(Wire):
    queries: list[str]
    hypothetical: str | None = None


# §7.9: the graph operations.
GraphOp = Literal["local", "global", "drift", "communities", "neighbors"]


class GraphParams(Wire):
    op: GraphOp
    query: QueryInput | None = None
    k: Count | None = None
    seed_ids: list[DocumentId] | None = None
    hops: Count | None = None
    level: NonNegative | None = None
    unit: Unit | None = None
    session_id: Token | None = None
    cursor: Cursor | None = None


class Community(Wire):
    id: str
    summary: str | None = None
    score: float | None = None
    level: NonNegative | None = None
    title: str | None = None


class GraphNode(Wire):
    id: str
    score: float | None = None


class GraphEdge(Edge):
    pass


class GraphResult(Wire):
    hits: list[Hit] | None = None
    summary: str | None = None
    communities: list[Community] | None = None
    followups: list[str] | None = None
    nodes: list[GraphNode] | None = None
    edges: list[GraphEdge] | None = None
    next_cursor: str | None = None
    usage: Usage | None = None


# --- index/add, index/delete (§7.10, §7.11) ---


class Document(Wire):
    """One ``index/add`` document: §7.10's ``{id?, text, meta?}`` and rcpkit's extensions.

    The schema requires ``text``; §4.8 makes Content blocks the form of "an indexed
    document body" too, so ``content`` alone is a body (``text`` is then empty),
    and ``title``, ``uri`` and ``modality`` are kept as provenance. Neither body
    is -32602. ``initialize`` says so in ``_meta.indexDocument``
    (`index_document_extension`), so a client reads the extension instead of
    guessing it from a schema that does not list it.
    """

    text: str = ""
    id: DocumentId | None = None
    meta: Meta | None = None
    title: str | None = None
    uri: str | None = None
    modality: Modality | None = None
    content: list[Content] | None = None
    # rcpkit: the document's own vector, for an index created for your own vectors.
    vector: list[float] | None = None


SPEC_DOCUMENT_FIELDS = ("id", "text", "meta")  # §7.10 and the schema's IndexAddParams


def index_document_extension() -> dict[str, Any]:
    """``_meta.indexDocument`` of ``initialize``: what a document takes beyond §7.10."""
    names = [field.encode_name for field in msgspec.structs.fields(Document)]
    return {
        "body": ["text", "content"],  # either one; the schema's `required: [text]` is relaxed
        "extensions": [name for name in names if name not in SPEC_DOCUMENT_FIELDS],
    }


def retrieve_params_extension() -> dict[str, Any]:
    """``_meta.retrieveParams`` of ``initialize``: what ``retrieve`` takes beyond §7.7."""
    return {"extensions": ["vector"]}


class IndexAddParams(Wire):
    documents: list[Document]
    chunk: bool | None = None
    contextual: bool | None = None


class IndexAddResult(Wire):
    ids: list[str]
    chunks: NonNegative | None = None
    index_version: str | None = None


class IndexDeleteParams(Wire):
    ids: list[DocumentId]


class IndexDeleteResult(Wire):
    deleted: NonNegative
    index_version: str | None = None


# --- catalog/list (§7.13) ---


class CatalogListParams(Wire):
    cursor: Cursor | None = None


class CatalogEngine(Wire):
    id: str
    server: PeerInfo
    capabilities: dict[str, Any]
    endpoint: dict[str, Any] | None = None


class CatalogListResult(Wire):
    engines: list[CatalogEngine]
    next_cursor: str | None = None


# --- feedback (§7.16), memory (§7.17) ---


class FeedbackSignal(Wire):
    hit_id: DocumentId | int | float
    used: bool | None = None
    cited: bool | None = None
    helpful: bool | None = None
    reward: float | None = None
    poison_suspected: bool | None = None
    injection_suspected: bool | None = None

    def __post_init__(self) -> None:
        if self.reward is not None and not -1.0 <= self.reward <= 1.0:
            raise ValueError("`reward` must be in [-1, 1]")


class FeedbackParams(Wire):
    signals: list[FeedbackSignal]
    session_id: Token | None = None
    query: KeptText | None = None


class FeedbackResult(Wire):
    accepted: NonNegative


class MemoryDocument(Wire):
    text: str
    id: DocumentId | None = None


class MemoryBuildParams(Wire):
    documents: list[MemoryDocument] | None = None
    memory_id: Token | None = None
    scope: Literal["global", "session"] | None = None
    session_id: Token | None = None


class MemoryBuildResult(Wire):
    memory_id: str
    tokens: NonNegative | None = None


class MemoryRecallParams(Wire):
    query: QueryInput
    memory_id: Token | None = None
    session_id: Token | None = None
    n: Count | None = None


class Clue(Wire):
    query: str | None = None
    seed_ids: list[str] | None = None
    weight: float | None = None


class MemoryRecallResult(Wire):
    clues: list[Clue]
    hits: list[Hit] | None = None


# --- notifications (§9, §7.14, §17.1) ---


class ProgressParams(Wire):
    progress_token: str | int
    progress: UnitFloat | None = None
    stage: str | None = None
    message: str | None = None
    partial: dict[str, Any] | None = None


class CancelParams(Wire):
    id: Id
    reason: str | None = None


class LogParams(Wire):
    level: Literal["debug", "info", "notice", "warning", "error"]
    message: str
    logger: str | None = None
    data: dict[str, Any] | None = None
