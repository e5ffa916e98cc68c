"""Writes: documents → chunks → vectors and analyzed terms → one atomic commit."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import normalize_meta
from rcpkit.engine.ingest import ChunkSpan, SourceDocument, chunk_document, contextual_prefix
from rcpkit.engine.ingest.collector import collector_paused
from rcpkit.engine.ingest.commit_time import record_commit_time
from rcpkit.engine.models import Embedder, Vectors, embed_between
from rcpkit.engine.store.base import CommitResult, DocumentRow, NewChunk, WriteBatch
from rcpkit.engine.text.analysis import analyze_code_many, analyze_many, analyze_with_words

__all__ = [
    "IndexReport",
    "commit_batch",
    "content_hash_of",
    "delete_documents",
    "document_batch",
    "document_spans",
    "embedded_inputs",
    "embedding_inputs",
    "index_documents",
    "learned_sparse",
    "lexical_title",
]

_SPARSE_STEP = 64  # texts per sparse-encoder call between cancellation checkpoints
_write_lock = threading.Lock()  # commit and dense update happen in one order

Checkpoint = Callable[[], None]
Progress = Callable[[float, str], None]


@dataclass(slots=True)
class IndexReport:
    ids: list[str] = field(default_factory=list)
    chunks: int = 0
    unchanged: int = 0
    version: int = 0
    remembered: str | None = None  # §7.10: the key's original result; nothing was written


# json.dumps(..., sort_keys=True, ensure_ascii=False, default=str), without an encoder a call.
_HASHED_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def content_hash_of(text: str, meta: object, title: str | None) -> str:
    """Identity of an inline document's content (for unchanged-skip and idempotency)."""
    payload = _HASHED_JSON.encode([text, meta, title])
    return hashlib.sha256(payload.encode()).hexdigest()


@collector_paused()  # a write's rows (see ``collector``); one request's worth
def index_documents(
    engine: Engine,
    documents: Sequence[SourceDocument],
    *,
    chunk: bool = True,
    contextual: bool = True,
    skip_unchanged: bool = False,
    checkpoint: Checkpoint | None = None,
    progress: Progress | None = None,
    idempotency_key: str | None = None,
    result_of: Callable[[IndexReport], str] | None = None,
    origin: str = "index/add",
    tenant: str | None = None,
    vectors: Mapping[str, Any] | None = None,
) -> IndexReport:
    """Chunk, embed and commit ``documents`` atomically (upsert by id, §7.10).

    ``vectors``: the caller's own vector per document id (an index of your own
    vectors; ``rcpkit.engine.models.own_vectors``): nothing is embedded, and each
    document is one chunk carrying its vector.
    """
    report = IndexReport(ids=[document.id for document in documents])
    # Within one batch the last occurrence of an id wins, as a later upsert would.
    latest = list({document.id: document for document in documents}.values())
    todo = [
        document
        for document in latest
        if not (
            skip_unchanged
            and engine.store.content_hash(document.id, tenant) == document.content_hash
        )
    ]
    report.unchanged = len(documents) - len(todo)
    embedder = engine.embedder(checkpoint)
    chunk = chunk and not vectors  # one vector per document: one chunk per document
    spans = [document_spans(engine, document, embedder.count_tokens, chunk) for document in todo]
    # What a model reads (the situating prefix and the text, a copy per chunk) is made
    # only when a model will read it: with the caller's own vectors, only a sparse one.
    inputs = (
        [
            text
            for document, pieces in zip(todo, spans, strict=True)
            for text in embedding_inputs(document, pieces, contextual)
        ]
        if not vectors or engine.sparse_slot is not None
        else []
    )
    # The caller's own vectors, in chunk order; else the chunks embedded below.
    embedded: list[Any] = (
        [vectors[document.id] for document in todo]
        if vectors
        else list(embedded_inputs(embedder, inputs, checkpoint, progress))
    )
    sparse = learned_sparse(engine, inputs, checkpoint)
    batch = document_batch(engine, todo, spans, embedded, contextual, origin, sparse)
    batch.tenant = tenant
    report.chunks = sum(len(pieces) for pieces in spans)
    if checkpoint is not None:
        checkpoint()  # the last point where a cancel leaves nothing written
    if not batch.documents and idempotency_key is None:
        # Nothing changed: no commit, no new version (§15.6: the tenant's own number).
        report.version = engine.store.tenancy.latest(tenant)
        return report
    with _write_lock:
        if idempotency_key is not None and result_of is not None:
            make_result = result_of

            def remembered(version: int) -> str:
                # Rendered inside the commit: only the store knows the version it gets
                # (another process may commit in between on a shared store).
                report.version = version
                return make_result(report)

            result = engine.store.commit(batch, (idempotency_key, remembered))
        else:
            result = engine.store.commit(batch)
        _apply(engine, result, tenant, wrote=bool(batch.documents))
    report.version = result.shown
    report.remembered = result.remembered
    return report


def embedded_inputs(
    embedder: Embedder,
    inputs: Sequence[str],
    checkpoint: Checkpoint | None,
    progress: Progress | None,
) -> Vectors:
    """The request's chunks in one embedder call: length-sorted as a whole, as the raw
    embedder would (issue 51), with ``checkpoint`` and progress between its batches."""
    if not inputs:
        return np.zeros((0, embedder.dimension), np.float32)

    def between(done: int) -> None:
        if checkpoint is not None:
            checkpoint()
        if progress is not None and done:
            progress(done / len(inputs), "embed")

    vectors = embed_between(embedder, inputs, "document", between)
    if progress is not None:
        progress(1.0, "embed")
    return vectors


@collector_paused()
def commit_batch(engine: Engine, batch: WriteBatch) -> CommitResult | None:
    """Commit ``batch`` as one version, or nothing at all when it changes nothing."""
    if not batch.documents and not batch.delete:
        return None  # an unchanged run must not create a version (pins would expire)
    with _write_lock:
        result = engine.store.commit(batch)
        _apply(engine, result, batch.tenant, wrote=bool(batch.documents))
    return result


def embedding_inputs(
    document: SourceDocument, spans: Sequence[ChunkSpan], contextual: bool
) -> list[str]:
    """What the embedder is given per chunk: the situating prefix, then the chunk's text."""
    return [
        (contextual_prefix(document.title, span.heading_path) if contextual else "") + span.text
        for span in spans
    ]


def delete_documents(engine: Engine, ids: Sequence[str], tenant: str | None = None) -> CommitResult:
    """Delete by id within ``tenant``'s id space; absent ids are not an error (§7.11)."""
    with _write_lock:
        result = engine.store.commit(WriteBatch(delete=list(ids), tenant=tenant))
        _apply(engine, result, tenant)
    return result


def _apply(engine: Engine, result: CommitResult, tenant: str | None, wrote: bool = False) -> None:
    """After a commit: record its time, update the dense index, garbage-collect old versions.

    ``wrote``: the batch held documents. A commit that made no version (an
    idempotent replay, a delete of absent ids) records no time.
    """
    made_version = wrote or bool(result.removed) or result.deleted_documents > 0
    if made_version and result.remembered is None:
        record_commit_time(engine.store, tenant)
    engine.dense.apply(result, tenant)
    if engine.graphs is not None:
        engine.graphs.apply(tenant, [key for key, _ in result.added], result.removed)
    engine.dense.drop(engine.store.collect(engine.config.snapshot_retention))
    engine.store.forget_idempotency(engine.config.idempotency_retention_seconds)


_SPARSE_TERMS = 128  # strongest SPLADE terms kept per chunk (bounds the posting table)


def learned_sparse(
    engine: Engine, inputs: Sequence[str], checkpoint: Checkpoint | None
) -> list[tuple[Any, Any]] | None:
    """Top SPLADE term weights per chunk, when a learned-sparse model is configured."""
    encoder = engine.sparse_encoder(checkpoint)
    if encoder is None:
        return None
    out = []
    for start in range(0, len(inputs), _SPARSE_STEP):
        if checkpoint is not None:
            checkpoint()
        for vector in encoder.encode(inputs[start : start + _SPARSE_STEP], "document"):
            strongest = np.argsort(-vector.values, kind="stable")[:_SPARSE_TERMS]
            out.append((vector.indices[strongest], vector.values[strongest]))
    return out


def document_spans(
    engine: Engine,
    document: SourceDocument,
    count_tokens: Callable[[Sequence[str]], list[int]],
    chunk: bool = True,
) -> list[ChunkSpan]:
    """The chunks of ``document`` at the engine's token budget (or one chunk, unchunked)."""
    if chunk:
        return chunk_document(
            document,
            count_tokens,
            max_tokens=engine.config.max_chunk_tokens,
            overlap_tokens=engine.config.chunk_overlap_tokens,
        )
    page = document.pages[0].page if document.pages else None
    return [ChunkSpan(0, 0, len(document.text), document.text, (), page)]


def lexical_title(document: SourceDocument) -> str:
    """What the BM25 title field holds: the title, else a string ``meta.title``.

    Clients of index/add often put the title in ``meta.title`` (and the text's first
    line) rather than in ``title``; the weighted title field then still gets it (issue 16:
    nDCG@10 on the dev halves, Cranfield 0.397 -> 0.398 with feedback and 0.365 -> 0.384
    without, docstrings 0.635 -> 0.641). Only the analysed field changes: the stored
    document's ``title`` and what is embedded are the client's as sent.
    """
    if document.title:
        return document.title
    title = document.meta.get("title")
    return title if isinstance(title, str) else ""


@collector_paused()
def document_batch(
    engine: Engine,
    documents: Sequence[SourceDocument],
    spans: Sequence[Sequence[ChunkSpan]],
    vectors: Sequence[object],
    contextual: bool,
    origin: str,
    sparse: Sequence[Any] | None,
) -> WriteBatch:
    """Upserts of ``documents``, their chunks carrying ``vectors`` in order."""
    fields = engine.config.filter_fields
    batch = WriteBatch()
    position = 0
    analysed = _analysed(documents, spans)
    for document, document_spans, (title_terms, bodies, words) in zip(
        documents, spans, analysed, strict=True
    ):
        # §4.8: the modality is a filterable field of every chunk (modality = "code").
        tagged = {**document.meta, "modality": document.modality}
        filter_meta = normalize_meta(tagged, fields)  # type: ignore[arg-type]
        chunks = []
        for span, body, surface in zip(document_spans, bodies, words, strict=True):
            context = contextual_prefix(document.title, span.heading_path) if contextual else None
            chunks.append(
                NewChunk(
                    index=span.index,
                    start=span.start,
                    end=span.end,
                    text=span.text,
                    page=span.page,
                    context=context or None,
                    title_terms=title_terms,
                    body_terms=" ".join(body),
                    vector=vectors[position],  # type: ignore[arg-type]
                    filter_meta=filter_meta,
                    sparse=sparse[position] if sparse is not None else None,
                    words=surface,
                )
            )
            position += 1
        pages = [(page.page, page.start, page.end) for page in document.pages or []] or None
        row = DocumentRow(
            doc_id=document.id,
            title=document.title,
            uri=document.uri,
            source=str(document.meta.get("path") or document.id),
            modality=document.modality,
            meta=dict(document.meta),
            content_hash=document.content_hash,
            text=document.text,
            pages=pages,
            origin=origin,
        )
        batch.documents.append((row, chunks))
    return batch


Analysed = tuple[str, list[list[str]], list[set[str]]]


def _analysed(
    documents: Sequence[SourceDocument], spans: Sequence[Sequence[ChunkSpan]]
) -> list[Analysed]:
    """Per document its title's terms, and per chunk its body terms and surface words.

    Each chunk is analysed once, for the index and the vocabulary alike, and prose
    and code each in one batch (issue 51.5). Code is analysed identifier-aware
    (parse_filter -> parsefilter, parse, filter).
    """
    out: list[Analysed] = [("", [], [])] * len(documents)
    for code in (False, True):
        chosen = [
            n for n, document in enumerate(documents) if (document.modality == "code") == code
        ]
        if not chosen:
            continue
        titles = (analyze_code_many if code else analyze_many)(
            [lexical_title(documents[n]) for n in chosen]
        )
        texts = [span.text for n in chosen for span in spans[n]]
        bodies, words = analyze_with_words(texts, code)
        start = 0
        for n, title in zip(chosen, titles, strict=True):
            end = start + len(spans[n])
            out[n] = (" ".join(title), bodies[start:end], words[start:end])
            start = end
    return out
