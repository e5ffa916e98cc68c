"""What the engine needs from storage: records in, atomic commits, lexical and filtered reads.

One real backend (SQLite, ``sqlite.py``); PostgreSQL + pgvector is planned
behind the same interface, and the store tests are written against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["ChunkRow", "CommitResult", "DocumentRow", "NewChunk", "Store", "WriteBatch"]

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


class Store(Protocol):
    @property
    def version(self) -> int: ...

    def commit(self, batch: WriteBatch) -> CommitResult: ...

    @property
    def floor(self) -> int: ...

    def collect(self, retain: int) -> list[int]: ...

    def lexical(
        self,
        match: str,
        limit: int,
        where: str | None,
        params: Sequence[object],
        version: int | None = None,
    ) -> list[tuple[int, float]]: ...

    def filtered_keys(
        self, where: str, params: Sequence[object], version: int | None = None
    ) -> Keys: ...

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]: ...

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys]: ...

    def content_hash(self, doc_id: str) -> str | None: ...

    def setting(self, name: str) -> str | None: ...

    def set_setting(self, name: str, value: str) -> None: ...

    def count(self) -> tuple[int, int]: ...

    def close(self) -> None: ...
