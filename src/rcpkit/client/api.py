"""One typed method per RCP method (§7), built from the protocol's own params/result types.

Wire fields are keyword arguments in snake_case (``candidate_k``, ``top_n``);
each call is validated client-side (-32602 naming the field) and gated on
the advertised capabilities before any I/O.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, Literal, ParamSpec, TypeVar

import msgspec

from rcpkit.client.connection import ProgressCallback
from rcpkit.client.options import CallOptions
from rcpkit.client.streaming import StreamingCall
from rcpkit.client.wire import BY_PARAMS
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Encoding, Modality, Unit, Wire
from rcpkit.protocol.content import QueryInput, TextInput
from rcpkit.protocol.errors import RCPError

__all__ = [
    "Prepared",
    "TypedMethods",
    "awaited",
    "build_params",
    "graph_call",
    "retrieve_call",
    "streamed",
]

R = TypeVar("R", bound=Wire)
W = TypeVar("W", bound=Wire)
P = ParamSpec("P")
Struct = Mapping[str, Any]  # a nested params object may be given as its wire-shaped dict


@dataclass(frozen=True, slots=True)
class Prepared(Generic[R]):
    """A typed call, ready to send: method, params, result type and options."""

    method: str
    params: Wire
    result: type[R]
    options: CallOptions


def retrieve_call(
    query: QueryInput,
    *,
    k: int = 10,
    mode: m.RetrieveMode | None = None,
    modality: Modality | None = None,
    candidate_k: int | None = None,
    fusion: m.Fusion | Struct | None = None,
    rerank: m.RerankOption | Struct | Literal[False] | None = None,
    mmr: m.Mmr | Struct | None = None,
    rewrite: m.RewriteMethod | Literal[False] | None = None,
    filter: Struct | None = None,
    min_score: float | None = None,
    recency: m.Recency | Struct | None = None,
    unit: Unit | None = None,
    level: int | None = None,
    token_budget: int | None = None,
    session_id: str | None = None,
    include_text: bool | None = None,
    include_vectors: bool | None = None,
    encoding: Encoding | None = None,
    seed: int | None = None,
    index_version: str | None = None,
    strict: bool | None = None,
    cursor: str | None = None,
    vector: Sequence[float] | None = None,
    timeout: float | None = None,
    options: CallOptions | None = None,
    on_progress: ProgressCallback | None = None,
) -> Prepared[m.RetrieveResult]:
    """§7.7 ``retrieve``: every ``RetrieveParams`` field as a typed keyword (snake_case).

    ``vector`` is rcpkit's extension (``_meta.retrieveParams``): the query's own vector
    on an index of your own vectors.
    """
    given = locals()
    if vector is not None:
        given["vector"] = [float(value) for value in vector]
    return _prepared("retrieve", m.RetrieveParams, m.RetrieveResult, given)


def _prepared(method: str, kind: type[W], result: type[R], given: dict[str, Any]) -> Prepared[R]:
    """The call a declaration's keywords (its ``locals()``) describe: the set fields as params."""
    fields = {name: given[name] for name in kind.__struct_fields__ if given[name] is not None}
    options = given["options"] or CallOptions()
    merged = options.merged(given["timeout"], given["on_progress"])
    return Prepared(method, build_params(kind, **fields), result, merged)


def _describe(method: Callable[..., Any], prepare: Callable[..., Any]) -> None:
    """``help()`` and ``inspect`` show the declaration's keywords, after ``self``."""
    declared = inspect.signature(prepare)
    this = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = declared.replace(  # type: ignore[attr-defined]
        parameters=[this, *declared.parameters.values()]
    )
    method.__doc__ = prepare.__doc__


def graph_call(
    op: m.GraphOp,
    *,
    query: QueryInput | None = None,
    k: int | None = None,
    seed_ids: Sequence[str] | None = None,
    hops: int | None = None,
    level: int | None = None,
    unit: Unit | None = None,
    session_id: str | None = None,
    cursor: str | None = None,
    timeout: float | None = None,
    options: CallOptions | None = None,
    on_progress: ProgressCallback | None = None,
) -> Prepared[m.GraphResult]:
    """§7.9 ``graph``: ``op`` in the advertised ``graph.ops``, the rest as typed keywords."""
    given = locals()
    if seed_ids is not None:
        given["seed_ids"] = list(seed_ids)
    return _prepared("graph", m.GraphParams, m.GraphResult, given)


def awaited(
    prepare: Callable[P, Prepared[R]],
) -> Callable[Concatenate[TypedMethods, P], Coroutine[Any, Any, R]]:
    """A client method that sends what ``prepare`` builds and awaits its typed result."""

    async def call(self: TypedMethods, /, *args: P.args, **kwargs: P.kwargs) -> R:
        prepared = prepare(*args, **kwargs)
        return await self._typed(
            prepared.method, prepared.params, prepared.result, prepared.options
        )

    _describe(call, prepare)
    return call


def streamed(
    prepare: Callable[P, Prepared[R]],
) -> Callable[Concatenate[TypedMethods, P], StreamingCall[R]]:
    """The same call as a :class:`StreamingCall`: iterate its progress, await its result."""

    def call(self: TypedMethods, /, *args: P.args, **kwargs: P.kwargs) -> StreamingCall[R]:
        prepared = prepare(*args, **kwargs)
        return self._stream_typed(
            prepared.method, prepared.params, prepared.result, prepared.options
        )

    _describe(call, prepare)
    return call


class TypedMethods(ABC):
    """The typed surface; the client supplies ``_typed`` and ``_stream_typed``."""

    @abstractmethod
    async def _typed(
        self, method: str, params: Wire, result: type[R], options: CallOptions
    ) -> R: ...

    @abstractmethod
    def _stream_typed(
        self, method: str, params: Wire, result: type[R], options: CallOptions
    ) -> StreamingCall[R]: ...

    async def _run(
        self,
        method: str,
        params: Wire,
        result: type[R],
        timeout: float | None,
        options: CallOptions | None,
        on_progress: ProgressCallback | None = None,
    ) -> R:
        return await self._typed(
            method, params, result, (options or CallOptions()).merged(timeout, on_progress)
        )

    # --- lifecycle (§7.2, §7.15) ---

    async def info(
        self, *, timeout: float | None = None, options: CallOptions | None = None
    ) -> m.InitializeResult:
        return await self._run("info", m.InfoParams(), m.InitializeResult, timeout, options)

    async def ping(
        self,
        nonce: str | int | float | None = None,
        *,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.PingResult:
        return await self._run("ping", m.PingParams(nonce=nonce), m.PingResult, timeout, options)

    # --- embeddings (§7.3–§7.5) ---

    async def embed(
        self,
        inputs: Sequence[TextInput],
        *,
        kind: Any = None,
        encoding: Any = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.EmbedResult:
        params = m.EmbedParams(inputs=list(inputs), kind=kind, encoding=encoding)
        return await self._run("embed", params, m.EmbedResult, timeout, options)

    async def embed_sparse(
        self,
        texts: Sequence[TextInput],
        *,
        kind: Any = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.SparseEmbedResult:
        params = m.SparseEmbedParams(texts=list(texts), kind=kind)
        return await self._run("embed/sparse", params, m.SparseEmbedResult, timeout, options)

    async def embed_multi(
        self,
        inputs: Sequence[TextInput],
        *,
        kind: Any = None,
        encoding: Any = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.MultiEmbedResult:
        params = m.MultiEmbedParams(inputs=list(inputs), kind=kind, encoding=encoding)
        return await self._run("embed/multi", params, m.MultiEmbedResult, timeout, options)

    # --- rerank (§7.6), retrieve (§7.7), transform (§7.8), graph (§7.9) ---

    async def rerank(
        self,
        query: QueryInput,
        passages: Sequence[TextInput],
        *,
        method: Any = None,
        top_n: int | None = None,
        model: str | None = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> m.RerankResult:
        params = m.RerankParams(
            query=query, passages=list(passages), method=method, top_n=top_n, model=model
        )
        return await self._run("rerank", params, m.RerankResult, timeout, options, on_progress)

    # §7.7: one declaration (``retrieve_call``), awaited or streamed.
    retrieve = awaited(retrieve_call)
    stream_retrieve = streamed(retrieve_call)

    def stream(
        self, params: Wire, *, timeout: float | None = None, options: CallOptions | None = None
    ) -> StreamingCall[Any]:
        """Any method as a :class:`StreamingCall`, from its typed params struct."""
        spec = BY_PARAMS.get(type(params))
        if spec is None:
            raise TypeError(f"{type(params).__name__} is not the params type of an RCP method")
        merged = (options or CallOptions()).merged(timeout, None)
        return self._stream_typed(spec.name, params, spec.result, merged)

    async def query_transform(
        self,
        query: QueryInput,
        method: Any,
        *,
        n: int | None = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.TransformResult:
        params = m.TransformParams(query=query, method=method, n=n)
        return await self._run("query/transform", params, m.TransformResult, timeout, options)

    graph = awaited(graph_call)

    # --- index (§7.10, §7.11), catalog (§7.13) ---

    async def index_add(
        self,
        documents: Sequence[m.Document | Mapping[str, Any]],
        *,
        chunk: bool | None = None,
        contextual: bool | None = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> m.IndexAddResult:
        """§7.10. Give documents stable ``id``s so that a retry is a safe upsert."""
        params = m.IndexAddParams(
            documents=[_document(item) for item in documents], chunk=chunk, contextual=contextual
        )
        return await self._run("index/add", params, m.IndexAddResult, timeout, options, on_progress)

    async def index_delete(
        self,
        ids: Sequence[str],
        *,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.IndexDeleteResult:
        params = m.IndexDeleteParams(ids=list(ids))
        return await self._run("index/delete", params, m.IndexDeleteResult, timeout, options)

    async def catalog_list(
        self, *, timeout: float | None = None, options: CallOptions | None = None
    ) -> m.CatalogListResult:
        params = m.CatalogListParams()
        return await self._run("catalog/list", params, m.CatalogListResult, timeout, options)

    # --- feedback (§7.16), memory (§7.17) ---

    async def feedback(
        self,
        signals: Sequence[m.FeedbackSignal | Mapping[str, Any]],
        *,
        session_id: str | None = None,
        query: str | None = None,
        timeout: float | None = None,
        options: CallOptions | None = None,
    ) -> m.FeedbackResult:
        typed = [_convert(m.FeedbackSignal, signal, "signals") for signal in signals]
        params = m.FeedbackParams(signals=typed, session_id=session_id, query=query)
        return await self._run("feedback", params, m.FeedbackResult, timeout, options)

    async def memory_build(
        self,
        /,
        *,
        timeout: float | None = None,
        options: CallOptions | None = None,
        **fields: Any,
    ) -> m.MemoryBuildResult:
        params = build_params(m.MemoryBuildParams, **fields)
        return await self._run("memory/build", params, m.MemoryBuildResult, timeout, options)

    async def memory_recall(
        self,
        /,
        query: QueryInput,
        *,
        timeout: float | None = None,
        options: CallOptions | None = None,
        **fields: Any,
    ) -> m.MemoryRecallResult:
        params = build_params(m.MemoryRecallParams, query=query, **fields)
        return await self._run("memory/recall", params, m.MemoryRecallResult, timeout, options)


def build_params(kind: type[W], **fields: Any) -> W:
    """A params struct from snake_case keyword arguments (an unknown name is -32602)."""
    try:
        return kind(**fields)
    except (TypeError, ValueError) as error:
        raise RCPError.invalid_params("params", f"invalid parameters: {error}") from None


def _convert(kind: type[W], value: W | Mapping[str, Any], field: str) -> W:
    if isinstance(value, kind):
        return value
    try:
        return msgspec.convert(value, kind, strict=False)
    except msgspec.ValidationError as error:
        raise RCPError.invalid_params(field, f"invalid `{field}` entry: {error}") from None


def _document(value: m.Document | Mapping[str, Any]) -> m.Document:
    return _convert(m.Document, value, "documents")
