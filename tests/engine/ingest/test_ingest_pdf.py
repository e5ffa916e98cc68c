"""PDFs: text per page, 1-based page spans, titles, and skips for what has no text."""

from __future__ import annotations

from pathlib import Path

import pytest
from pdf_support import build_pdf

from rcpkit.engine.ingest import (
    PageSpan,
    Skipped,
    SourceDocument,
    chunk_document,
    iter_documents,
    whitespace_token_counter,
)
from rcpkit.engine.ingest import _pdf as pdf_module

pytest.importorskip("pypdf")


PAGE_ONE = ["Annual report", "Revenue grew (a lot) this year."]
PAGE_TWO = ["Outlook", "Next year looks steady."]


def _load(tmp_path: Path, data: bytes) -> SourceDocument | Skipped:
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    (item,) = iter_documents([path])
    return item


def test_a_two_page_pdf_has_one_span_per_page_with_exact_offsets(tmp_path: Path) -> None:
    document = _load(tmp_path, build_pdf([PAGE_ONE, PAGE_TWO]))
    assert isinstance(document, SourceDocument)
    assert document.pages is not None
    assert [page.page for page in document.pages] == [1, 2]
    first, second = (document.text[p.start : p.end] for p in document.pages)
    assert first == "Annual report\nRevenue grew (a lot) this year."
    assert second == "Outlook\nNext year looks steady."
    assert document.pages[0].end < document.pages[1].start


def test_pdf_title_comes_from_metadata_else_the_first_line(tmp_path: Path) -> None:
    titled = _load(tmp_path, build_pdf([PAGE_ONE], title="Acme Report 2024"))
    untitled = _load(tmp_path, build_pdf([PAGE_ONE]))
    assert isinstance(titled, SourceDocument)
    assert isinstance(untitled, SourceDocument)
    assert titled.title == "Acme Report 2024"
    assert untitled.title == "Annual report"


def test_pdf_chunks_record_their_page_and_never_straddle_pages(tmp_path: Path) -> None:
    lines = [f"Sentence number {i} on this page." for i in range(40)]
    document = _load(tmp_path, build_pdf([lines, lines[:5], lines]))
    assert isinstance(document, SourceDocument)
    assert document.pages is not None
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=64, overlap_tokens=8)
    assert {chunk.page for chunk in chunks} == {1, 2, 3}
    for chunk in chunks:
        (page,) = [p for p in document.pages if p.start <= chunk.start < p.end]
        assert chunk.page == page.page
        assert chunk.end <= page.end
        assert chunk.text == document.text[chunk.start : chunk.end]


def test_an_empty_page_gets_an_empty_span_and_text_pages_keep_numbers(tmp_path: Path) -> None:
    document = _load(tmp_path, build_pdf([[], PAGE_TWO]))
    assert isinstance(document, SourceDocument)
    assert document.pages == [PageSpan(1, 0, 0), PageSpan(2, 0, len(document.text))]
    chunks = chunk_document(document, whitespace_token_counter)
    assert [chunk.page for chunk in chunks] == [2]


def test_a_pdf_without_extractable_text_is_skipped(tmp_path: Path) -> None:
    skip = _load(tmp_path, build_pdf([[], []]))
    assert isinstance(skip, Skipped)
    assert "no extractable text" in skip.reason


def test_a_corrupt_pdf_is_skipped(tmp_path: Path) -> None:
    skip = _load(tmp_path, b"%PDF-1.4\nthis is not really a pdf\n")
    assert isinstance(skip, Skipped)
    assert "PDF" in skip.reason


def test_without_pypdf_a_pdf_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_module, "pdf_library", lambda: None)
    skip = _load(tmp_path, build_pdf([PAGE_ONE]))
    assert isinstance(skip, Skipped)
    assert "pypdf" in skip.reason


def test_a_reportlab_pdf_keeps_page_numbers(tmp_path: Path) -> None:
    canvas_module = pytest.importorskip("reportlab.pdfgen.canvas")
    path = tmp_path / "made.pdf"
    canvas = canvas_module.Canvas(str(path))
    canvas.setTitle("Made with ReportLab")
    for number in (1, 2):
        canvas.drawString(72, 720, f"This is page {number} of the handbook.")
        canvas.showPage()
    canvas.save()
    (document,) = iter_documents([path])
    assert isinstance(document, SourceDocument)
    assert document.title == "Made with ReportLab"
    assert document.pages is not None
    texts = [document.text[p.start : p.end] for p in document.pages]
    assert texts == ["This is page 1 of the handbook.", "This is page 2 of the handbook."]
