"""What the engine needs from storage: records in, atomic commits, backend-neutral reads.

Two backends implement it: the embedded SQLite file (``sqlite.py``) and
PostgreSQL + pgvector (``postgres.py``) shared by many stateless servers. The
interface speaks the engine's own terms, never a backend's query language:
every read takes the parsed §8 filter tree (or None). A store holds the
durable rows and their writes; what queries rank with is its ``index``, the one
:class:`~rcpkit.engine.index.QueryIndex` both backends feed (lexical search,
filter masks; issue 28). Dense recall goes through :class:`DenseSearch`, which
a store opens: the query index's process-local matrix for SQLite, SQL over
pgvector for PostgreSQL.

The contract tests in ``tests/engine/store/test_engine_store.py`` run against both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter
from rcpkit.engine.index import Index
from rcpkit.engine.scoring.bm25 import BM25
from rcpkit.engine.store.tenant_versions import Tenancy
from rcpkit.engine.text.analysis import surface_words

__all__ = [
    "CHUNK_FIELDS",
    "ChunkColumns",
    "DOCUMENT_COLUMNS",
    "DOCUMENT_FIELDS",
    "JOINED_DOCUMENT_FIELDS",
    "ChunkRow",
    "CommitResult",
    "DenseSearch",
    "DocumentRow",
    "Idempotency",
    "NewChunk",
    "Store",
    "WriteBatch",
    "chunk_row",
    "document_row",
    "document_values",
    "stored_json",
]

Keys = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class DocumentRow:
    doc_id: str
    title: str | None
    uri: str | None
    source: str
    modality: str
    meta: dict[str, Any]
    content_hash: str
    text: str
    pages: list[tuple[int, int, int]] | None = None  # (page, start, end)
    origin: str = "index/add"  # how it arrived: "ingest" (rcpkit index) or "index/add"


# One encoder for every stored JSON value: ``json.dumps`` with options builds one per call.
_JSON = json.JSONEncoder(ensure_ascii=False)


def stored_json(value: object) -> str:
    """``value`` as the stores keep JSON text (``json.dumps(value, ensure_ascii=False)``)."""
    return _JSON.encode(value)


# The documents table's column order, shared by every backend's insert.
DOCUMENT_COLUMNS = (
    "tenant",
    "doc_id",
    "title",
    "uri",
    "source",
    "modality",
    "meta",
    "content_hash",
    "text",
    "pages",
    "origin",
    "added",
)


# What `document_row` reads, in its order.
DOCUMENT_FIELDS = "doc_id, title, uri, source, modality, meta, content_hash, text, pages, origin"
# The same, qualified for a join with chunks (``documents d``).
JOINED_DOCUMENT_FIELDS = ", ".join(f"d.{name.strip()}" for name in DOCUMENT_FIELDS.split(","))


def document_row(values: Sequence[Any]) -> DocumentRow:
    """A DocumentRow from ``SELECT`` :data:`DOCUMENT_FIELDS` (JSON columns as text or parsed)."""
    doc_id, title, uri, source, modality, meta, content_hash, text, pages, origin = values
    meta = json.loads(meta) if isinstance(meta, str) else meta
    pages = json.loads(pages) if isinstance(pages, str) else pages
    return DocumentRow(
        doc_id,
        title,
        uri,
        source,
        modality,
        dict(meta or {}),
        content_hash,
        text,
        [tuple(page) for page in pages] if pages else None,
        origin,
    )


def document_values(tenant: str, document: DocumentRow, version: int) -> tuple[object, ...]:
    """One documents row in :data:`DOCUMENT_COLUMNS` order (JSON columns serialised)."""
    return (
        tenant,
        document.doc_id,
        document.title,
        document.uri,
        document.source,
        document.modality,
        stored_json(document.meta),
        document.content_hash,
        document.text,
        json.dumps(document.pages) if document.pages else None,
        document.origin,
        version,
    )


# A chunk row's shared columns: doc_key, tenant, doc_id, idx, start, end, page, text,
# context, filter_meta (JSON text).
ChunkColumns = tuple[int, str, str, int, int, int, int | None, str, str | None, str]


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk to write: its span, the texts analyzed for BM25 and its dense vector."""

    index: int
    start: int
    end: int
    text: str
    page: int | None
    context: str | None
    title_terms: str
    body_terms: str
    vector: npt.NDArray[np.float32]
    filter_meta: dict[str, Any]
    # Learned-sparse term weights (SPLADE), when a sparse model is configured.
    sparse: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None
    # Its surface words (the vocabulary's), when the indexer analysed them with its terms.
    words: AbstractSet[str] | None = None

    def surface_words(self) -> AbstractSet[str]:
        """The distinct words of its text the vocabulary counts (`surface_words`)."""
        return surface_words(self.text) if self.words is None else self.words

    def row_values(
        self, doc_key: int, tenant: str, doc_id: str, meta: str | None = None
    ) -> ChunkColumns:
        """Its ``chunks`` columns both backends write, in their order: ``doc_key`` through
        ``filter_meta`` (JSON; ``meta``: that JSON made already, for a document's chunks
        sharing one mapping); each backend adds the vector and the version its way."""
        if meta is None:
            meta = stored_json(self.filter_meta)
        return (doc_key, tenant, doc_id, self.index, self.start, self.end, self.page,
                self.text, self.context, meta)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A stored chunk, hydrated with what a Hit needs of its document."""

    key: int
    doc_id: str
    index: int
    start: int
    end: int
    text: str
    page: int | None
    context: str | None
    modality: str
    title: str | None
    uri: str | None
    source: str
    meta: dict[str, Any]
    origin: str = "index/add"

    @property
    def chunk_id(self) -> str:
        return f"{self.doc_id}#{self.index}"


# What a fetch selects of a chunk (``c``) and its document (``d``), in `chunk_row`'s order.
CHUNK_FIELDS = (
    'c.key, c.doc_id, c.idx, c.start, c."end", c.text, c.page, c.context,'
    " d.modality, d.title, d.uri, d.source, d.meta, d.origin"
)


def chunk_row(row: Sequence[Any]) -> ChunkRow:
    """A :data:`CHUNK_FIELDS` row as a ``ChunkRow`` (``meta``: a dict, or its JSON text)."""
    key, doc_id, index, start, end, text, page, context, *document = row
    modality, title, uri, source, meta, origin = document
    meta = json.loads(meta) if isinstance(meta, str) else meta
    return ChunkRow(
        int(key), doc_id, index, start, end, text, page, context,
        modality, title, uri, source, meta, origin,
    )  # fmt: skip


@dataclass(slots=True)
class WriteBatch:
    """Upserts (each document with all its chunks) and deletions, committed together."""

    documents: list[tuple[DocumentRow, list[NewChunk]]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)
    tenant: str | None = None  # §15.6: every id in the batch lives in this tenant's space


@dataclass(frozen=True, slots=True)
class CommitResult:
    version: int
    added: list[tuple[int, npt.NDArray[np.float32]]]  # (key, vector) of new chunks
    removed: list[int]  # keys of chunks retired at `version` (still visible to older ones)
    deleted_documents: int
    # §7.10: the key was already recorded (another request, maybe another process, got
    # there first): nothing was written and this is the original result.
    remembered: str | None = None
    # §15.6: the version as the batch's tenant numbers its own commits (tenant_versions);
    # what the writer is shown. ``version`` is the store's global one.
    shown: int = 0


Ranked = list[tuple[int, float]]  # (chunk key, score), best first
# §7.10: an idempotency key and its result (or the result rendered from the new version).
Idempotency = tuple[str, str | Callable[[int], str]]


class DenseSearch(Protocol):
    """Dense recall over unit vectors; score = cosine (§6.1 floor -1)."""

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> Ranked:
        """Top ``k`` visible to ``tenant`` at ``version`` (None: latest) that pass ``filter``."""
        ...

    def vectors_of(self, keys: Sequence[int]) -> dict[int, npt.NDArray[np.float32]]: ...

    def apply(self, result: CommitResult, tenant: str | None) -> None:
        """Learn of a commit made through this process (a no-op when the store searches)."""
        ...

    def drop(self, keys: Sequence[int]) -> None:
        """Forget garbage-collected keys."""
        ...

    def live_count(self, tenant: str | None = None) -> int: ...

    def sample(self, limit: int, tenant: str | None = None) -> npt.NDArray[np.float32]:
        """Up to ``limit`` of ``tenant``'s live vectors, the same ones for the same corpus
        (calibration, per tenant: §15.6)."""
        ...


class Store(Protocol):
    """The system of record: versioned documents, chunks, postings and vectors (§7.7.1)."""

    # The BM25 parameters every lexical read ranks with, recorded with the index.
    bm25: BM25

    @property
    def tenancy(self) -> Tenancy:
        """§15.6: each tenant's own version numbers, floor and retention."""
        ...

    @property
    def index(self) -> Index:
        """What queries rank with: BM25 postings and filter columns over the committed rows."""
        ...

    @property
    def version(self) -> int:
        """The last committed version, as every process sees it."""
        ...

    @property
    def floor(self) -> int:
        """The oldest version still servable; older ones were garbage-collected."""
        ...

    def commit(self, batch: WriteBatch, idempotency: Idempotency | None = None) -> CommitResult:
        """Apply ``batch`` as the next version; ``idempotency`` records (key, result) with it."""
        ...

    def collect(self, retain: int) -> list[int]: ...

    def forget_idempotency(self, retention_seconds: float) -> int:
        """Drop ``_meta.idempotencyKey`` results recorded at least that long ago (§7.10)."""
        ...

    def open_dense(self, dimension: int, policy: Any) -> DenseSearch:
        """The dense recall this store's engine uses (``policy``: a DensePolicy)."""
        ...

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]: ...

    def documents_of(self, keys: Sequence[int]) -> dict[int, DocumentRow]:
        """The document each chunk belongs to, by chunk key, whatever its version.

        The very document row the chunk was cut from (a pinned reader's chunk may
        belong to a document replaced since), so the chunk's offsets index its text.
        """
        ...

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        """Each chunk's body as the lexical index holds it: its analysed terms in order,
        space-separated (``NewChunk.body_terms``). Only for the keys a store keeps them
        in order for; the caller analyses the text of any other."""
        ...

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys, list[str]]: ...

    def filter_values(self, keys: Sequence[int], name: str) -> dict[int, Any]: ...

    def content_hash(self, doc_id: str, tenant: str | None = None) -> str | None: ...

    def live_documents(self, tenant: str | None = None) -> list[tuple[str, str | None, str]]:
        """``(doc_id, uri, origin)`` of every live document of ``tenant``, by id."""
        ...

    def document(self, doc_id: str, tenant: str | None = None) -> DocumentRow | None:
        """The live document ``doc_id`` with its full text (what citation offsets index)."""
        ...

    def document_chunks(self, doc_id: str, tenant: str | None = None) -> list[ChunkRow]:
        """The live chunks of the live document ``doc_id``, in their order (by index)."""
        ...

    def describe(self) -> dict[str, Any]:
        """``tenants`` (live ones), ``size_bytes`` on disk (None: unknown)."""
        ...

    def remembered(self, idempotency_key: str) -> str | None: ...

    def vocabulary(self, tenant: str | None = None) -> list[tuple[str, int]]: ...

    def live_texts(self, limit: int, tenant: str | None = None) -> list[str]: ...

    def document_frequency(self, word: str, tenant: str | None = None) -> int: ...

    def setting(self, name: str) -> str | None: ...

    def set_setting(self, name: str, value: str) -> None: ...

    def setting_default(self, name: str, value: str) -> str:
        """The setting, first set to ``value`` if absent (race-free across processes)."""
        ...

    def count(self, tenant: str | None = None) -> tuple[int, int]: ...

    def ingested(self, tenant: str | None = None) -> int:
        """How many of ``tenant``'s live documents ``rcpkit index`` wrote (origin ``ingest``).

        A count, not a listing: ``rcpkit stats`` and ``x-rcpkit/stats`` ask it of
        a whole corpus, and a server over Solr must hold no corpus (issue 48).
        """
        ...

    def purge_tenant(self, tenant: str, schemas: Sequence[str] = ()) -> dict[str, int]:
        """Delete every row of ``tenant`` (and drop ``schemas``, PostgreSQL); rows per table.

        What refuses the tenant's old version numbers stays, so a tenant of that name
        created again never serves them.
        """
        ...

    def close(self) -> None: ...
