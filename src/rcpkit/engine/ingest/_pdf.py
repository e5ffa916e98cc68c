"""PDF to text with page spans, through pypdf (pure Python) when it is installed."""

from __future__ import annotations

import io
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING

from rcpkit.engine.ingest._decoding import normalize_newlines
from rcpkit.engine.ingest._formats import EXTRACTED
from rcpkit.engine.ingest._ocr import OCR_MISSING, join_lines, ocr_available, ocr_pdf_pages
from rcpkit.engine.ingest._source import FileSource, SkipFile, build_document, read_source_bytes
from rcpkit.engine.ingest._types import PageSpan, SourceDocument

if TYPE_CHECKING:
    from pypdf import PdfReader

__all__ = ["join_pages", "load_pdf", "pdf_library"]

# A blank line between pages makes a page end a paragraph boundary for the chunker.
_PAGE_SEPARATOR = "\n\n"
_MAX_TITLE_CHARS = 200
_MIN_LAYER_CHARS = 16


def load_pdf(source: FileSource) -> Iterable[SourceDocument]:
    """One document whose `pages` map each 1-based page to its range of the text."""
    pypdf = pdf_library()
    if pypdf is None:
        raise SkipFile("PDF support needs the 'pypdf' package")
    raw = read_source_bytes(source)
    reader = _open(pypdf, raw)
    try:
        page_texts = [page.extract_text() or "" for page in reader.pages]
    except Exception as error:  # pypdf raises many types on broken files
        raise SkipFile(f"unreadable PDF ({type(error).__name__})") from None
    scanned = [number for number, page in enumerate(page_texts, 1) if not _usable(page)]
    found = ocr_pdf_pages(raw, scanned) if scanned and ocr_available() else {}
    # A short real text layer stays unless OCR reads more of the page.
    read = {
        n: lines
        for n, lines in found.items()
        if len(join_lines(lines)[0]) > len(page_texts[n - 1].strip())
    }
    for number, lines in read.items():
        page_texts[number - 1] = join_lines(lines)[0]
    text, pages = join_pages(page_texts)
    if not text:
        reason = "" if read or not scanned or ocr_available() else f"; {OCR_MISSING}"
        raise SkipFile(f"PDF has no extractable text (scanned or image-only?){reason}")
    title = _metadata_title(reader) or _first_line(text)
    if not read:
        return [build_document(source, raw, text=text, title=title, pages=pages, extra=EXTRACTED)]
    regions = [
        [number, pages[number - 1].start + start, pages[number - 1].start + end, *box]
        for number, lines in read.items()
        for start, end, *box in join_lines(lines)[1]
    ]
    extra = {**EXTRACTED, "ocrPages": sorted(read), "regions": regions}
    return [build_document(source, raw, text=text, title=title, pages=pages, extra=extra)]


def pdf_library() -> ModuleType | None:
    """pypdf, imported on the first PDF: it costs a quarter of a second that every
    ``rcpkit query`` and server start would pay for ingest code they never run."""
    try:
        import pypdf
    except ImportError:  # pragma: no cover - tested by patching this function
        return None
    return pypdf


def _usable(page_text: str) -> bool:
    """A text layer with a few real words; a scan's stray glyphs or nothing is not one."""
    return sum(char.isalnum() for char in page_text) >= _MIN_LAYER_CHARS


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


def _open(pypdf: ModuleType, raw: bytes) -> PdfReader:
    try:
        reader: PdfReader = pypdf.PdfReader(io.BytesIO(raw))
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
