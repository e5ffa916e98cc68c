"""The values ingestion produces: documents, page spans, skips and chunk spans."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["ChunkSpan", "Modality", "PageSpan", "SkipFile", "Skipped", "SourceDocument"]

# "image": text read by OCR from image Content blocks (index/add, §4.8).
Modality = Literal["text", "code", "image"]


@dataclass(frozen=True, slots=True)
class PageSpan:
    """One PDF page as a character range ``[start, end)`` of ``SourceDocument.text``."""

    page: int
    """1-based page number, as a reader would cite it."""
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One ingested document: the plain text that every chunk offset refers to."""

    id: str
    """Stable id: the POSIX path relative to the ingestion root, or a BEIR row's ``_id``."""
    text: str
    """Extracted plain text; newlines normalised to ``\\n``, BOM removed."""
    title: str | None
    uri: str
    """``file://`` URI of the absolute path; BEIR rows add ``#<_id>``."""
    modality: Modality
    meta: dict[str, object]
    """``path``, ``ext``, ``mtime`` (RFC 3339, UTC) and ``size`` for files; BEIR row fields."""
    pages: list[PageSpan] | None
    """PDF pages (or the images of an index/add document) in order, else ``None``."""
    content_hash: str
    """sha256 hex digest of the raw file bytes (of the row's JSON line for BEIR)."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file (or BEIR row) that produced no document, and why."""

    path: Path
    reason: str
    line: int | None = None
    """1-based line number for a skipped BEIR row, else ``None``."""


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """A chunk of a document; ``text == document.text[start:end]`` always holds."""

    index: int
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...]
    """Markdown headings above the chunk, outermost first: ``("Install", "On Linux")``."""
    page: int | None
    """Page of the chunk's first character for PDFs, else ``None``."""


class SkipFile(Exception):
    """Raised by a loader; the walker turns it into a `Skipped` value in one place."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
