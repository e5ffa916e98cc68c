"""PDFs: text per page, 1-based page spans, titles, and skips for what has no text."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _page_objects(lines: list[str], page_id: int) -> list[bytes]:
    resources = "/Resources << /Font << /F1 3 0 R >> >>"
    page = f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] {resources}"
    ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"] + [f"({_escape(x)}) Tj T*" for x in lines]
    stream = "\n".join([*ops, "ET"]).encode() if lines else b""
    return [
        f"{page} /Contents {page_id + 1} 0 R >>".encode(),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
    ]


def build_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal valid PDF by hand: one Helvetica text line per string, a page per list."""
    page_ids = [4 + 2 * index for index in range(len(pages))]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for lines, page_id in zip(pages, page_ids, strict=True):
        objects += _page_objects(lines, page_id)
    info = ""
    if title is not None:
        objects.append(f"<< /Title ({_escape(title)}) >>".encode())
        info = f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n"
    return bytes(out + trailer.encode() + b"%%EOF\n")


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
    monkeypatch.setattr(pdf_module, "_pypdf", None)
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
