"""What a loader is handed about one file, and the helpers every loader shares."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rcpkit.engine.ingest._meta import document_meta
from rcpkit.engine.ingest._types import Modality, PageSpan, SkipFile, Skipped, SourceDocument
from rcpkit.engine.ingest_options import IngestOptions

__all__ = [
    "FileSource",
    "ancestor_folders",
    "Loader",
    "SkipFile",
    "build_document",
    "read_source_bytes",
    "rfc3339_utc",
    "sha256_hex",
]


_DEFAULT_OPTIONS = IngestOptions()


@dataclass(frozen=True, slots=True)
class FileSource:
    """One file found by the walker, before any byte of it is read."""

    path: Path
    """Absolute path."""
    doc_id: str
    """POSIX path relative to the ingestion root."""
    ext: str
    """Lower-case extension with its dot, e.g. ``.md``."""
    size: int
    mtime: str
    max_bytes: int | None
    options: IngestOptions = _DEFAULT_OPTIONS

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    def meta(self) -> dict[str, object]:
        return {
            "path": self.doc_id,
            "folders": ancestor_folders(self.doc_id),
            "ext": self.ext,
            "mtime": self.mtime,
            "size": self.size,
        }


def ancestor_folders(relative_path: str) -> list[str]:
    """Every folder above a file, outermost first: ``a/b/c.md`` → ``["a", "a/b"]``.

    Stored as the array-valued filter field ``folders``, so ``contains "a/b"``
    selects a folder and everything under it (§8 element membership).
    """
    parts = relative_path.split("/")[:-1]
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]


Loader = Callable[[FileSource], Iterable[SourceDocument | Skipped]]


def rfc3339_utc(timestamp: float) -> str:
    """``2024-05-01T12:00:00Z`` for a POSIX timestamp (§4.6 recommends UTC)."""
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_source_bytes(source: FileSource) -> bytes:
    """The whole file, refusing files over the size limit before reading them."""
    if source.max_bytes is not None and source.size > source.max_bytes:
        raise SkipFile(f"too large ({source.size} bytes > {source.max_bytes})")
    return source.path.read_bytes()


def build_document(
    source: FileSource,
    raw: bytes,
    *,
    text: str,
    title: str | None,
    modality: Modality = "text",
    pages: list[PageSpan] | None = None,
    front: Mapping[str, Any] | None = None,
    doc_id: str | None = None,
    uri: str | None = None,
    extra: Mapping[str, object] | None = None,
) -> SourceDocument:
    """A document for a file (or one record of it, given ``doc_id``, ``uri`` and ``raw``).

    Whitespace-only text is a skip, never a document. ``front`` is front matter, read
    into ``meta`` with the file facts, ``lang``, ``date`` and ``tag`` (see ``_meta``).
    """
    if not text.strip():
        raise SkipFile("empty or whitespace-only")
    options = source.options
    meta = document_meta(
        {**source.meta(), **(extra or {})},
        front or {},
        text,
        renames=options.meta_fields,
        field_types=options.field_types,
        code=modality == "code",
    )
    heading = (front or {}).get("title")
    return SourceDocument(
        id=doc_id or source.doc_id,
        text=text,
        title=(heading if isinstance(heading, str) and heading.strip() else title)
        or source.path.stem,
        uri=uri or source.uri,
        modality=modality,
        meta=meta,
        pages=pages,
        content_hash=sha256_hex(raw + b"\0" + options.fingerprint()),
    )
