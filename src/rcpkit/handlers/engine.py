"""The engine as an RCP server: handlers that translate wire types to engine calls."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import msgspec

import rcpkit
from rcpkit.engine.engine import Engine
from rcpkit.engine.fields import refresh_declared_fields
from rcpkit.engine.filters import OPERATORS
from rcpkit.engine.ingest import PageSpan, SourceDocument
from rcpkit.engine.ingest.indexer import (
    IndexReport,
    delete_documents,
    index_documents,
)
from rcpkit.engine.models import encode_f32_base64
from rcpkit.engine.query import CHUNK_UNITS, DEFAULT_MODE, FUSIONS, GRAPH_UNITS, MODES, Query
from rcpkit.engine.rerank import HybridReranker
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.retrieve.recall import SCORE_FLOORS
from rcpkit.engine.retrieve.rescore import rerank_passages
from rcpkit.engine.store.deadline import deadline_scope
from rcpkit.engine.text.analysis import surface_words
from rcpkit.engine.transform import TRANSFORM_METHODS
from rcpkit.handlers.documents import (
    document_vectors,
    query_vector,
    source_document,
    wire_vectors,
)
from rcpkit.handlers.graph import graph_handler
from rcpkit.handlers.images import (
    OCR_MISSING,
    ImagePage,
    image_document_parts,
    modalities,
    ocr_text,
    query_text,
)
from rcpkit.handlers.inspect import register_inspection
from rcpkit.handlers.query import run_retrieve
from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import FilterCapability
from rcpkit.protocol.content import Content, text_of
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.app import App
from rcpkit.server.context import RequestContext

__all__ = ["build_engine_app"]


def build_engine_app(engine: Engine) -> App:
    """An App over ``engine``: retrieve, embed, embed/sparse, index/add, index/delete,
    and the read-only ``x-rcpkit/stats``/``x-rcpkit/document`` extensions."""
    config = engine.config
    # A store on a standby (PostgreSQL in recovery) takes no writes, whatever --read-only says.
    writable = config.writable and not engine.backend.read_only
    app = App("rcpkit", rcpkit.__version__, read_only=not writable)
    app.advertise("streaming")
    app.advertise("citations")
    app.advertise("log")  # §17.1: notifications/log in-band, to clients that opt in
    app.server.advertise(
        "filter",
        FilterCapability(fields=dict(config.filter_fields), operators=sorted(OPERATORS)),  # type: ignore[arg-type]
    )
    # §8: `contains` is membership on these and refused on other non-text fields; the
    # runtime checks it with the rest of the filter, before the handler (ctx.filter).
    app.server.array_fields(config.array_fields)

    app.advertise("pagination")
    # §4.8: image blocks are read by OCR, offered only with the `ocr` extra installed;
    # without it they stay -32005, the message naming the extra.
    accepted = modalities()
    if "image" not in accepted:
        app.server.unavailable("image", OCR_MISSING)
    fetchable = tuple(config.fetch_uris)  # the operator's opt-in to fetching image uris
    app.server.fetches(fetchable)
    app.advertise("session", dedup=True, ttl_seconds=config.session_ttl_seconds)
    # Issue 16: MaxSim over MiniLM token vectors lowers nDCG@10 (Cranfield 0.41 → 0.33)
    # and costs seconds cold, so it is advertised only when asked for; a configured
    # cross-encoder is.
    # Issue 33: "cross-encoder" is the engine's own hybrid scorer unless a model is set.
    rerank_methods = (["colbert"] if config.colbert_rerank else []) + (
        ["cross-encoder"] if config.cross_encoder or config.hybrid_rerank else []
    )

    @app.retrieve(
        max_k=config.max_k,
        modes=list(MODES),
        default_mode=DEFAULT_MODE,  # what an omitted mode means (cursors bind it too)
        fusion=list(FUSIONS),
        mmr=True,
        rerank_builtin=bool(rerank_methods),
        deterministic=True,
        snapshots=engine.backend.snapshots,
        units=[*CHUNK_UNITS, *(GRAPH_UNITS if engine.graphs else ())],
        token_budget=True,
        confidence=True,
        recency=True,
        modalities=accepted,
        # One floor for every mode: cosine (dense) and rerank scores >= -1, BM25/fused >= 0.
        score_scale="unbounded",
        score_floor=min(SCORE_FLOORS.values()),
        encodings=["json", "f32-base64"],
    )
    def retrieve_handler(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
        if _has_image(params.query):  # §4.8: an image query is its OCR text (noted)
            params = msgspec.structs.replace(
                params, query=query_text(params.query, "query", ctx, fetchable)
            )
        own = query_vector(engine, params.vector)  # rcpkit's `_meta.retrieveParams` extension
        return run_retrieve(engine, params, ctx.filter, ctx, own)

    @app.embed(
        dimension=engine.dimension,
        identity=engine.identity,
        batch_limit=config.embed_batch_limit,
        normalized=True,
        modalities=accepted,
        encodings=["json", "f32-base64"],
    )
    def embed(params: m.EmbedParams, ctx: RequestContext) -> m.EmbedResult:
        field = "inputs" if params.inputs is not None else "texts"
        texts = [
            ocr_text(item, f"{field}[{index}]", ctx, required=True, fetchable=fetchable)
            for index, item in enumerate(params.items)
        ]
        vectors = engine.embedder(ctx.check_cancelled).embed(texts, params.kind or "document")
        usage = m.Usage(notes=list(ctx.notes)) if ctx.notes else None
        if params.encoding == "f32-base64":
            return m.EmbedResult(
                vectors=[encode_f32_base64(row) for row in vectors],
                encoding="f32-base64",
                dimension=engine.dimension,
                usage=usage,
            )
        return m.EmbedResult(vectors=vectors.tolist(), usage=usage)

    if engine.sparse_slot is not None:
        _register_sparse(app, engine)
    if rerank_methods:
        _register_rerank(app, engine, rerank_methods, accepted, fetchable)
    _register_multi_vector(app, engine)

    _register_memory(app, engine)
    register_inspection(app, engine)  # x-rcpkit/stats and x-rcpkit/document (read-only)
    if engine.graphs is not None:
        _register_graph(app, engine)

    @app.query_transform(methods=list(TRANSFORM_METHODS))
    def query_transform(params: m.TransformParams, ctx: RequestContext) -> m.TransformResult:
        done = engine.rewriter.run(params.method, text_of(params.query), params.n, ctx)
        return m.TransformResult(queries=done.queries, hypothetical=done.hypothetical)

    @app.feedback()
    @_bounded
    def feedback(params: m.FeedbackParams, ctx: RequestContext) -> m.FeedbackResult:
        # §7.16: advisory data only; recorded durably, acted on by the quarantine policy.
        return m.FeedbackResult(accepted=engine.feedback.record(params, ctx.tenant))

    @app.index_add(writable=writable, chunking=True, contextual=True, modalities=accepted)
    @_bounded
    def index_add(params: m.IndexAddParams, ctx: RequestContext) -> Any:
        if len(params.documents) > config.max_add_documents:
            raise RCPError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                f"{len(params.documents)} documents exceed the limit of "
                f"{config.max_add_documents} per index/add; split the batch",
                field="documents",
            )
        raw_key = ctx.meta.get("idempotencyKey")
        # Keys live in the caller's tenant space, like ids (§15.6).
        key = f"{ctx.tenant or ''}\x1f{raw_key}" if isinstance(raw_key, str) else None
        if key is not None:
            remembered = engine.store.remembered(key)
            if remembered is not None:  # §7.10: a repeat of the key gets the original result
                return msgspec.json.decode(remembered)
        # Every document is read (images OCR'd) before anything is written: one that
        # fails fails the call and leaves the index as it was.
        documents = [
            _source(position, document, engine, ctx, fetchable)
            for position, document in enumerate(params.documents)
        ]
        rows = wire_vectors(params.documents)
        own = document_vectors(engine, documents, rows, lambda i: f"documents[{i}].vector")
        # A key declared by another process (rcpkit.open beside this server) is kept
        # filterable in what this server writes; filtering on it waits for a restart,
        # the capabilities being fixed once served (§13.2).
        refresh_declared_fields(config, engine.store)
        report = index_documents(
            engine,
            documents,
            vectors=own,
            chunk=params.chunk is not False,
            contextual=params.contextual is not False,
            checkpoint=ctx.check_cancelled,
            progress=lambda value, stage: ctx.progress(value, stage),
            idempotency_key=key,
            result_of=lambda report: msgspec.json.encode(_added(report)).decode(),
            tenant=ctx.tenant,
        )
        if report.remembered is not None:  # the same key committed meanwhile (another process)
            return msgspec.json.decode(report.remembered)
        return _added(report)

    @app.index_delete()
    @_bounded
    def index_delete(params: m.IndexDeleteParams, ctx: RequestContext) -> m.IndexDeleteResult:
        result = delete_documents(engine, params.ids, ctx.tenant)
        return m.IndexDeleteResult(
            deleted=result.deleted_documents, index_version=str(result.shown)
        )

    return app


def _added(report: IndexReport) -> m.IndexAddResult:
    return m.IndexAddResult(ids=report.ids, chunks=report.chunks, index_version=str(report.version))


def _source(
    position: int,
    document: m.Document,
    engine: Engine,
    ctx: RequestContext,
    fetchable: tuple[str, ...],
) -> SourceDocument:
    path = f"documents[{position}]"
    meta = dict(document.meta or {})
    text, pages = document.text, None
    if document.content:
        text, pages, extra = _content_body(document, f"{path}.content", ctx, fetchable)
        meta.update(extra)
    if not text.strip():
        where, why = (
            (f"{path}.content", "the document has no text (OCR found none in its images)")
            if pages
            else (f"{path}.text", "the document has no text")
        )
        raise RCPError.invalid_params(where, why)
    return source_document(engine, position, document, text, meta, pages)


_PART_SEPARATOR = "\n\n"  # a paragraph boundary between the document's parts


def _content_body(
    document: m.Document, path: str, ctx: RequestContext, fetchable: tuple[str, ...]
) -> tuple[str, list[PageSpan] | None, dict[str, Any]]:
    """The text of ``text`` then each ``content`` block, one page per image (§4.8).

    An image's recognised lines are its page; ``meta.regions`` holds
    ``[page, start, end, x0, y0, x1, y1]`` per line (offsets into the document's
    text, the box in the image's pixels) as for image files, and ``meta.images``
    each image's page, block, mimeType and size. ``meta.textOf = "ocr"``.
    """
    assert document.content is not None
    parts: list[str | ImagePage] = [document.text] if document.text.strip() else []
    parts += image_document_parts(document.content, path, ctx, fetchable)
    pieces: list[str] = []
    pages: list[PageSpan] = []
    regions: list[list[float]] = []
    images: list[dict[str, Any]] = []
    position = 0
    for part in parts:
        body = part.read.text if isinstance(part, ImagePage) else part.strip()
        if pieces and body:
            pieces.append(_PART_SEPARATOR)
            position += len(_PART_SEPARATOR)
        if isinstance(part, ImagePage):
            number = len(pages) + 1
            pages.append(PageSpan(page=number, start=position, end=position + len(body)))
            regions += [
                [number, position + start, position + end, *box]
                for start, end, *box in part.read.joined[1]
            ]
            images.append(
                {
                    "page": number,
                    "block": part.block,
                    "mimeType": part.mime_type,
                    "width": part.read.width,
                    "height": part.read.height,
                }
            )
            if not body:
                ctx.notes.append(f"`{path}[{part.block}]`: OCR found no legible text")
        pieces.append(body)
        position += len(body)
    if not pages:
        return "".join(pieces), None, {}
    return "".join(pieces), pages, {"textOf": "ocr", "regions": regions, "images": images}


def _has_image(value: object) -> bool:
    if isinstance(value, Content):
        return value.type == "image"
    return isinstance(value, list) and any(_has_image(item) for item in value)


def _register_sparse(app: App, engine: Engine) -> None:
    # The capability names the model, so the learned-sparse model loads before serving.
    loaded = engine.sparse_encoder()
    assert loaded is not None

    @app.embed_sparse(identity=loaded.identity, vocabulary=loaded.vocabulary_size)
    def embed_sparse(params: m.SparseEmbedParams, ctx: RequestContext) -> m.SparseEmbedResult:
        encoder = engine.sparse_encoder(ctx.check_cancelled)
        assert encoder is not None
        texts = [text_of(item) for item in params.items]
        vectors = encoder.encode(texts, params.kind or "document")
        return m.SparseEmbedResult(
            sparse=[
                m.SparseVector(indices=v.indices.tolist(), values=v.values.tolist())
                for v in vectors
            ]
        )


def _register_rerank(
    app: App, engine: Engine, methods: list[str], accepted: list[Any], fetchable: tuple[str, ...]
) -> None:
    config = engine.config

    @app.rerank(
        methods=methods,
        max_candidates=config.max_rerank,
        models=[engine.identity],
        modalities=accepted,
    )
    def rerank(params: m.RerankParams, ctx: RequestContext) -> m.RerankResult:
        query = query_text(params.query, "query", ctx, fetchable)
        field = "passages" if params.passages is not None else "documents"
        # A passage image without legible text is scored as the empty passage it reads as.
        passages = [
            ocr_text(item, f"{field}[{index}]", ctx, required=False, fetchable=fetchable)
            for index, item in enumerate(params.items)
        ]
        reranker = engine.reranker(params.method or methods[0], ctx.check_cancelled)
        raw: Any  # a list or an array of float scores
        if isinstance(reranker, HybridReranker):  # this index's own rows: as retrieve scores
            raw = rerank_passages(
                engine, reranker, query, passages, ctx.tenant, ctx.check_cancelled
            )
        else:
            raw = reranker.score(query, passages, ctx.check_cancelled)
        scores = [float(value) for value in raw]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        if params.top_n is not None:
            order = order[: params.top_n]
        return m.RerankResult(
            scores=scores,
            order=order,
            results=[m.RerankedIndex(index=i, score=scores[i]) for i in order],
            usage=m.Usage(notes=list(ctx.notes)) if ctx.notes else None,
        )


def _register_multi_vector(app: App, engine: Engine) -> None:
    # §7.5: token matrices are a surface of their own; a client may score MaxSim itself
    # even when the server does not advertise MaxSim as a rerank method.
    @app.embed_multi(
        dimension=engine.dimension,
        identity=engine.identity,
        similarity="cosine",
        modalities=["text", "code"],
        encodings=["json", "f32-base64"],
    )
    def embed_multi(params: m.MultiEmbedParams, ctx: RequestContext) -> m.MultiEmbedResult:
        texts = [text_of(item) for item in params.items]
        matrices = engine.embedder(ctx.check_cancelled).embed_tokens(
            texts, params.kind or "document"
        )
        if params.encoding == "f32-base64":
            # One blob per input: its token rows concatenated (§7.3.1 applied to §7.5).
            return m.MultiEmbedResult(
                matrices=[encode_f32_base64(matrix.reshape(-1)) for matrix in matrices],
                dimension=engine.dimension,
                encoding="f32-base64",
            )
        return m.MultiEmbedResult(
            matrices=[matrix.tolist() for matrix in matrices], dimension=engine.dimension
        )


H = TypeVar("H", bound=Callable[..., Any])


def _bounded(handler: H) -> H:
    """§13.1: the handler's store work (writes, graph reads) stops at the request's deadline.

    On PostgreSQL each statement runs under ``statement_timeout`` of the time left
    (see ``store.deadline``): a write cut off rolls back whole, and is -32014.
    """

    @functools.wraps(handler)
    def run(params: Any, ctx: RequestContext) -> Any:
        with deadline_scope(ctx.deadline):
            return handler(params, ctx)

    return cast(H, run)


def _register_memory(app: App, engine: Engine) -> None:
    @app.memory_build(scopes=["global", "session"], clues=True)
    @_bounded
    def memory_build(params: m.MemoryBuildParams, ctx: RequestContext) -> m.MemoryBuildResult:
        tenant = ctx.tenant
        if params.documents is not None:
            texts = [document.text for document in params.documents]
        else:
            texts = engine.store.live_texts(5000, tenant)
        words = set[str]().union(*map(surface_words, texts))  # the only dfs a memory reads
        memory_id, tokens = engine.memory.build(
            texts,
            engine.backend.vocabulary.frequencies(words, tenant),
            max(1, engine.store.count(tenant)[1]),
            engine.embedder(ctx.check_cancelled),
            tenant=tenant,
            scope=params.scope or "global",
            session_id=params.session_id,
            memory_id=params.memory_id,
        )
        return m.MemoryBuildResult(memory_id=memory_id, tokens=tokens)

    @app.memory_recall()
    @_bounded
    def memory_recall(params: m.MemoryRecallParams, ctx: RequestContext) -> m.MemoryRecallResult:
        query = text_of(params.query)
        n = min(params.n or 5, 20)  # §15.5: bounded fan-out
        embedder = engine.embedder(ctx.check_cancelled)
        tenant = ctx.tenant
        clues = engine.memory.recall(query, params.memory_id, tenant, n, embedder)
        draft = retrieve(engine, Query(query, k=n), ctx)
        return m.MemoryRecallResult(
            clues=[m.Clue(query=clue.query, weight=clue.weight) for clue in clues],
            hits=draft.hits,
        )


def _register_graph(app: App, engine: Engine) -> None:
    @app.graph(ops=["local", "global", "drift", "communities", "neighbors"], max_hops=3)
    @_bounded
    def graph(params: m.GraphParams, ctx: RequestContext) -> m.GraphResult:
        return graph_handler(engine, params, ctx)
