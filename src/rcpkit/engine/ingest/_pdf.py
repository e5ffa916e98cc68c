"""PDF to text with page spans, through pypdf (pure Python) when it is installed."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rcpkit.engine.ingest._decoding import normalize_newlines
from rcpkit.engine.ingest._formats import EXTRACTED
from rcpkit.engine.ingest._source import FileSource, SkipFile, build_document, read_source_bytes
from rcpkit.engine.ingest._types import PageSpan, SourceDocument

try:
    import pypdf as _pypdf
except ImportError:  # pragma: no cover - tested by patching this to None
    _pypdf = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["join_pages", "load_pdf"]

# A blank line between pages makes a page end a paragraph boundary for the chunker.
_PAGE_SEPARATOR = "\n\n"
_MAX_TITLE_CHARS = 200


def load_pdf(source: FileSource) -> Iterable[SourceDocument]:
    """One document whose `pages` map each 1-based page to its range of the text."""
    if _pypdf is None:
        raise SkipFile("PDF support needs the 'pypdf' package")
    raw = read_source_bytes(source)
    reader = _open(raw)
    try:
        page_texts = [page.extract_text() or "" for page in reader.pages]
    except Exception as error:  # pypdf raises many types on broken files
        raise SkipFile(f"unreadable PDF ({type(error).__name__})") from None
    text, pages = join_pages(page_texts)
    if not text:
        raise SkipFile("PDF has no extractable text (scanned or image-only?)")
    title = _metadata_title(reader) or _first_line(text)
    return [build_document(source, raw, text=text, title=title, pages=pages, extra=EXTRACTED)]


def join_pages(page_texts: Iterable[str]) -> tuple[str, list[PageSpan]]:
    """Concatenate page texts; a page without text gets an empty span where it falls."""
    parts: list[str] = []
    pages: list[PageSpan] = []
    position = 0
    for number, raw_text in enumerate(page_texts, start=1):
        page_text = normalize_newlines(raw_text.replace("\x00", "")).strip()
        if page_text and position:
            parts.append(_PAGE_SEPARATOR)
            position += len(_PAGE_SEPARATOR)
        pages.append(PageSpan(page=number, start=position, end=position + len(page_text)))
        parts.append(page_text)
        position += len(page_text)
    return "".join(parts), pages


def _open(raw: bytes) -> PdfReader:
    try:
        reader = _pypdf.PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not reader.decrypt(""):
            raise SkipFile("encrypted PDF")
    except SkipFile:
        raise
    except Exception as error:  # translated at the edge into a skip
        raise SkipFile(f"unreadable PDF ({type(error).__name__})") from None
    return reader


def _metadata_title(reader: PdfReader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata is not None else None
    except Exception:  # a broken info dict must not lose the text
        return None
    return (title.strip() or None) if isinstance(title, str) else None


def _first_line(text: str) -> str | None:
    line = next((line.strip() for line in text.split("\n") if line.strip()), "")
    return line[:_MAX_TITLE_CHARS] or None
