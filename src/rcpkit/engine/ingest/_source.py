"""What a loader is handed about one file, and the helpers every loader shares."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rcpkit.engine.ingest._types import Modality, PageSpan, Skipped, SourceDocument

__all__ = [
    "FileSource",
    "Loader",
    "SkipFile",
    "build_document",
    "read_source_bytes",
    "rfc3339_utc",
    "sha256_hex",
]


class SkipFile(Exception):
    """Raised by a loader; the walker turns it into a `Skipped` value in one place."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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

    @property
    def uri(self) -> str:
        return self.path.as_uri()

    def meta(self) -> dict[str, object]:
        return {"path": self.doc_id, "ext": self.ext, "mtime": self.mtime, "size": self.size}


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
) -> SourceDocument:
    """A document for a whole file; whitespace-only text is a skip, never a document."""
    if not text.strip():
        raise SkipFile("empty or whitespace-only")
    return SourceDocument(
        id=source.doc_id,
        text=text,
        title=title or source.path.stem,
        uri=source.uri,
        modality=modality,
        meta=source.meta(),
        pages=pages,
        content_hash=sha256_hex(raw),
    )
