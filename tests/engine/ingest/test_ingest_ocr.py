"""Images and scanned PDF pages read through OCR, with pages and regions kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from rcpkit.engine.ingest import Skipped, SourceDocument, _ocr, _pdf, iter_documents

PIL = pytest.importorskip("PIL")
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

LINES = ("Boundary layer transition", "at supersonic speeds")


def _page(lines: tuple[str, ...] = LINES) -> Image.Image:
    image = Image.new("RGB", (720, 80 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=30)
    for number, line in enumerate(lines):
        draw.text((30, 40 + 60 * number), line, fill="black", font=font)
    return image


def _words(text: str) -> set[str]:
    return {word.strip(".,").casefold() for word in text.split()}


def _documents(folder: Path) -> list[SourceDocument | Skipped]:
    return list(iter_documents([folder]))


def test_without_the_ocr_extra_an_image_is_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _page().save(tmp_path / "scan.png")
    monkeypatch.setattr(_ocr, "ocr_available", lambda: False)
    (skipped,) = _documents(tmp_path)
    assert isinstance(skipped, Skipped)
    assert "'ocr' extra" in skipped.reason


@pytest.mark.skipif(not _ocr.ocr_available(), reason="the 'ocr' extra is not installed")
def test_an_image_is_read_into_text_with_a_page_and_a_box_per_line(tmp_path: Path) -> None:
    _page().save(tmp_path / "scan.png")
    (document,) = _documents(tmp_path)
    assert isinstance(document, SourceDocument)
    assert {"layer", "transition", "supersonic", "speeds"} <= _words(document.text)
    assert document.pages is not None and document.pages[0].page == 1
    assert document.meta["textOf"] == "ocr"
    regions = document.meta["regions"]
    assert isinstance(regions, list) and len(regions) == 2
    for page, start, end, x0, y0, x1, y1 in regions:
        assert page == 1 and document.text[start:end].strip()
        assert 0 <= x0 < x1 <= 720 and 0 <= y0 < y1 <= 200
    assert regions[0][4] < regions[1][4]  # reading order: top line first


@pytest.mark.skipif(not _ocr.ocr_available(), reason="the 'ocr' extra is not installed")
def test_a_pdf_page_without_a_text_layer_is_read_through_ocr(tmp_path: Path) -> None:
    pytest.importorskip("pypdfium2")
    _page().save(tmp_path / "scanned.pdf", resolution=100.0)
    assert _pdf._pypdf is not None
    (document,) = _documents(tmp_path)
    assert isinstance(document, SourceDocument)
    assert {"supersonic", "speeds"} <= _words(document.text)
    assert document.meta["ocrPages"] == [1]
    assert document.pages is not None and [p.page for p in document.pages] == [1]
    assert all(region[0] == 1 for region in document.meta["regions"])  # type: ignore[attr-defined]
