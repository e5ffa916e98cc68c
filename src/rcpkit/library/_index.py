"""An index opened in this process: add, search, delete — the engine without a server.

>>> with rcpkit.open("./idx", create=True) as index:
...     index.add([{"id": "a", "text": "Refunds are paid within 14 days.", "meta": {"lang": "en"}}])
...     hits = index.search("how do refunds work", k=5, filter={"lang": "en"})

Every call runs the code the server's handlers run (``rcpkit.handlers``):
``search`` types and gates its options as a ``retrieve`` request and calls the
same entry point (``run_retrieve``), ``add`` builds documents as ``index/add``
does, ``add_paths`` is ``rcpkit index``. Calls are safe from several threads;
``close`` waits for those in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.fields import declare_fields, first_sight
from rcpkit.engine.ingest import SourceDocument
from rcpkit.engine.ingest.collector import collector_paused
from rcpkit.engine.ingest.indexer import delete_documents, index_documents
from rcpkit.engine.models import Vectors
from rcpkit.handlers.documents import document_vectors, query_vector, source_document
from rcpkit.handlers.inspect import index_figures
from rcpkit.handlers.query import run_retrieve
from rcpkit.library._errors import LibraryError, translated
from rcpkit.library._request import LocalRequest
from rcpkit.library._search import gated
from rcpkit.protocol import messages as m
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.content import Hit
from rcpkit.protocol.errors import RCPError
from rcpkit.protocol.validation import parse_params

if TYPE_CHECKING:
    from rcpkit.engine.ingest.folders import FolderRun

__all__ = ["AddResult", "Index", "SearchResult", "StoredDocument"]

Document = Mapping[str, Any] | str


@dataclass(frozen=True, slots=True)
class AddResult:
    """What one ``add`` committed: the documents' ids, their chunks, the new version."""

    ids: list[str]
    chunks: int
    version: int


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A document as the index holds it: its whole text and the metadata it was given."""

    id: str
    text: str
    title: str | None
    uri: str | None
    meta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchResult(Sequence[Hit]):
    """The hits of one search, best first, and what ``retrieve`` answers beside them.

    ``next_cursor`` continues the ranking (pass it as ``cursor=``); ``index_version``
    is the version searched (pass it as ``index_version=`` to read it again, §7.7.1).
    """

    hits: list[Hit]
    next_cursor: str | None = None
    index_version: str | None = None
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, position: Any) -> Any:
        return self.hits[position]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)


class Index:
    """An open index (see the module); made by :func:`rcpkit.open`."""

    def __init__(
        self,
        engine: Engine,
        capabilities: Capabilities,
        where: str,
        advertised: Mapping[str, Any] | None = None,
    ) -> None:
        self._engine = engine
        self._capabilities = capabilities
        self._advertised = dict(advertised or {})
        self._where = where
        self._state = threading.Condition()
        self._in_flight = 0
        self._closed = False
        self._on_close: list[Any] = []

    def __repr__(self) -> str:
        return f"<rcpkit.Index {self._where}{' (closed)' if self._closed else ''}>"

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def where(self) -> str:
        """The folder or database URL the index lives in."""
        return self._where

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """What ``rcpkit serve`` on this index advertises (§6.1), as ``initialize`` spells it."""
        return self._advertised

    @property
    def dimension(self) -> int:
        """The length of the index's vectors."""
        return self._engine.dimension

    @property
    def embedder(self) -> str:
        """The identity of the index's vectors: its model, or your own vectors' name (§15.7)."""
        return self._engine.identity

    def add(
        self,
        documents: Iterable[Document],
        *,
        vectors: object | None = None,
        chunk: bool = True,
        contextual: bool = True,
    ) -> AddResult:
        """Add (or replace, by id) ``documents`` in one commit (§7.10).

        A document is ``{"id", "text", "title", "uri", "meta", "modality", "vector"}``
        (only ``text`` required) or a plain string. Every ``meta`` key is filterable:
        a key the index has not seen is declared with the type of its first value.
        ``vectors`` (an index of your own vectors): one per document, a list of lists
        or a 2-D numpy array, instead of each document's ``vector``. ``chunk=False``
        keeps each document one chunk; ``contextual=False`` embeds chunks without
        their title and headings (§7.10 ``chunk``, ``contextual``).
        """
        # One pause of the collector for the whole write (``ingest.collector``).
        with self._call() as engine, translated(), collector_paused():
            sources, own = _sources(engine, documents, vectors)
            fields, arrays = first_sight((s.meta for s in sources), engine.config.filter_fields)
            declare_fields(engine.config, engine.store, fields, arrays)
            report = index_documents(
                engine, sources, vectors=own, chunk=chunk, contextual=contextual
            )
            return AddResult(ids=report.ids, chunks=report.chunks, version=report.version)

    def add_paths(
        self,
        paths: Iterable[str | Path],
        *,
        prune: bool = True,
        contextual: bool = True,
        reroot: bool = False,
        follow_links: bool = False,
        ocr_workers: int | None = None,
    ) -> FolderRun:
        """What ``rcpkit index PATH...`` does: files and folders mirrored in one commit."""
        from rcpkit.engine.ingest.folders import index_folders

        with self._call() as engine, translated():
            given = [Path(path) for path in paths]
            missing = [str(path) for path in given if not path.exists()]
            if missing:
                raise LibraryError(f"no such file or folder: {', '.join(missing)}")
            return index_folders(
                engine,
                given,
                prune=prune,
                contextual=contextual,
                options=engine.config.ingest,
                reroot=reroot,
                follow_links=follow_links,
                ocr_workers=ocr_workers,
            )

    def search(
        self,
        query: str | None = None,
        *,
        vector: object | None = None,
        k: int = 10,
        mode: str | None = None,
        filter: Mapping[str, Any] | None = None,
        unit: str | None = None,
        fusion: str | Mapping[str, Any] | None = None,
        rerank: bool | str | Mapping[str, Any] | None = None,
        mmr: bool | float | None = None,
        token_budget: int | None = None,
        cursor: str | None = None,
        index_version: str | int | None = None,
        candidate_k: int | None = None,
        min_score: float | None = None,
        recency: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        rewrite: str | None = None,
    ) -> SearchResult:
        """The hits for ``query``, exactly as ``retrieve`` with the same options ranks them.

        ``vector``: the query's own vector for the dense arm (an index of your own
        vectors needs it for dense and hybrid search); without ``query`` the search is
        dense by the vector alone.

        ``mode`` "dense", "sparse" or "hybrid" (None: the engine's default pipeline);
        ``filter`` a §8 tree or ``{field: value}`` equality; ``fusion`` a method name
        or ``{"method", "rrf_k", "alpha", "weights"}``; ``rerank`` True, a method or
        ``{"method", "top_n"}``; ``mmr`` True or the λ; ``recency``
        ``{"field", "half_life_days"}``.
        """
        options = {
            "k": k,
            "mode": mode,
            "filter": filter,
            "unit": unit,
            "fusion": fusion,
            "rerank": rerank,
            "mmr": mmr,
            "token_budget": token_budget,
            "cursor": cursor,
            "index_version": index_version,
            "candidate_k": candidate_k,
            "min_score": min_score,
            "recency": recency,
            "session_id": session_id,
            "rewrite": rewrite,
        }
        with self._call() as engine, translated():
            config = engine.config
            own = _query_vector(engine, vector)
            if query is None:
                if own is None:
                    raise LibraryError("search needs a query text, a vector, or both")
                if options["mode"] not in (None, "dense"):
                    raise LibraryError("a search by vector alone is dense", field="mode")
                options["mode"] = "dense"
            params, tree, notes = gated(
                query or " ", options, self._capabilities, config.filter_fields, config.array_fields
            )
            request = LocalRequest(notes)
            result = run_retrieve(engine, params, tree, request, own)
            return SearchResult(
                hits=list(result.hits),
                next_cursor=result.next_cursor,
                index_version=result.index_version,
                notes=list(result.usage.notes or []) if result.usage else [],
            )

    def delete(self, ids: Iterable[str]) -> int:
        """Delete documents by id (§7.11); absent ids are no error. The number deleted."""
        with self._call() as engine, translated():
            wanted = list(ids)
            if not all(isinstance(doc_id, str) for doc_id in wanted):
                raise LibraryError("ids must be strings (document ids)", field="ids")
            return delete_documents(engine, wanted).deleted_documents

    def get(self, ids: Iterable[str]) -> list[StoredDocument]:
        """The stored documents among ``ids``, in their order; absent ids are skipped.

        A read of those documents only (what ``rcpkit show`` reads), never a listing.
        """
        with self._call() as engine, translated():
            wanted = list(ids)
            if not all(isinstance(doc_id, str) for doc_id in wanted):
                raise LibraryError("ids must be strings (document ids)", field="ids")
            rows = (engine.store.document(doc_id) for doc_id in wanted)
            return [
                StoredDocument(row.doc_id, row.text, row.title, row.uri, dict(row.meta))
                for row in rows
                if row is not None
            ]

    def stats(self) -> dict[str, Any]:
        """What ``rcpkit stats`` prints, and the filter fields the index declares."""
        with self._call() as engine, translated():
            figures = index_figures(engine.store)
            figures["filter_fields"] = dict(engine.config.filter_fields)
            return figures

    def close(self) -> None:
        """Close the index once the calls in flight finish; later calls raise."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            self._state.wait_for(lambda: self._in_flight == 0)
        self._engine.close()
        for cleanup in self._on_close:
            cleanup()

    @contextmanager
    def _call(self) -> Iterator[Engine]:
        with self._state:
            if self._closed:
                raise LibraryError(f"the index at {self._where} is closed")
            self._in_flight += 1
        try:
            yield self._engine
        finally:
            with self._state:
                self._in_flight -= 1
                self._state.notify_all()


def _sources(
    engine: Engine, documents: Iterable[Document], vectors: object | None
) -> tuple[list[SourceDocument], dict[str, Vectors] | None]:
    """``add``'s documents as the indexer takes them, and their own vectors by id (or None)."""
    given = [{"text": item} if isinstance(item, str) else dict(item) for item in documents]
    # Each document's own `vector` (numpy rows too) is read apart from the struct.
    carried = [document.pop("vector", None) for document in given]
    params = parse_params(m.IndexAddParams, {"documents": given})
    rows = _carried(carried) if vectors is None else vectors
    sources = [
        source_document(engine, position, document, document.text, dict(document.meta or {}))
        for position, document in enumerate(params.documents)
    ]
    for position, source in enumerate(sources):
        if not source.text.strip():
            raise RCPError.invalid_params(f"documents[{position}].text", "the document has no text")
    return sources, document_vectors(engine, sources, rows, _vector_path(vectors is not None))


def _carried(vectors: list[Any]) -> list[Any] | None:
    """The documents' own vectors: all of them, or None when none carries one."""
    if all(vector is None for vector in vectors):
        return None
    missing = next((n for n, vector in enumerate(vectors) if vector is None), None)
    if missing is not None:
        raise LibraryError(
            "every document of one add carries its vector, or none does",
            field=f"documents[{missing}].vector",
        )
    return vectors


def _vector_path(separate: bool) -> Callable[[int], str]:
    """Where a bad vector is: in ``vectors=`` or in a document's ``vector``."""
    if separate:
        return lambda position: f"vectors[{position}]"
    return lambda position: f"documents[{position}].vector"


def _query_vector(engine: Engine, vector: object | None) -> tuple[float, ...] | None:
    """The query's own vector, checked as ``retrieve``'s wire ``vector`` is (one check:
    refused on an index with its own model, or at another dimension), at unit length."""
    if vector is None:
        return None
    if getattr(vector, "ndim", 1) == 2 and len(vector) == 1:  # type: ignore[arg-type]
        vector = vector[0]  # type: ignore[index]
    return query_vector(engine, vector)  # type: ignore[arg-type]
