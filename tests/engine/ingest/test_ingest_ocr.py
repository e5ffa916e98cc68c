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
    assert _pdf.pdf_library() is not None
    (document,) = _documents(tmp_path)
    assert isinstance(document, SourceDocument)
    assert {"supersonic", "speeds"} <= _words(document.text)
    assert document.meta["ocrPages"] == [1]
    assert document.pages is not None and [p.page for p in document.pages] == [1]
    assert all(region[0] == 1 for region in document.meta["regions"])  # type: ignore[attr-defined]


# --- word spaces (`_ocr.respace`) on synthetic lines -------------------------------

np = pytest.importorskip("numpy")


def _line_page(spans: list[tuple[int, int]], height: int = 30) -> object:
    """A white strip with black ink over each ``[start, end)`` column span."""
    gray = np.full((height, 200), 255.0)
    for start, end in spans:
        gray[5:25, start:end] = 0.0
    return gray


def _boxes(centres: list[float], height: int = 30) -> list[list[list[float]]]:
    return [[[c - 2, 0], [c + 2, 0], [c + 2, height], [c - 2, height]] for c in centres]


def test_respace_puts_a_space_at_an_ink_free_gap_wider_than_a_fifth_of_the_line() -> None:
    # "ab" | 10 px gap (> 0.2 x 30 px) | "cd"; the letters are 2 px apart.
    gray = _line_page([(10, 18), (20, 28), (38, 46), (48, 56)])
    chars, centres = list("abcd"), [14.0, 24.0, 42.0, 52.0]
    assert _ocr.respace(chars, _boxes(centres), gray, (0, 0, 200, 30)) == "ab cd"


def test_respace_adds_no_space_where_the_gap_is_a_letter_gap() -> None:
    gray = _line_page([(10, 18), (21, 29), (32, 40)])  # 3 px gaps < 6 px
    assert _ocr.respace(list("abc"), _boxes([14, 25, 36]), gray, (0, 0, 200, 30)) == "abc"


def test_respace_keeps_the_spaces_the_model_read_and_adds_none_beside_them() -> None:
    gray = _line_page([(10, 18), (38, 46)])
    chars, centres = ["a", " ", "b"], [14.0, 30.0, 42.0]
    assert _ocr.respace(chars, _boxes(centres), gray, (0, 0, 200, 30)) == "a b"


def test_respace_reads_light_text_on_a_dark_page_too() -> None:
    gray = 255.0 - _line_page([(10, 18), (38, 46)])
    assert _ocr.respace(list("ab"), _boxes([14, 42]), gray, (0, 0, 200, 30)) == "a b"


def test_respace_leaves_a_line_alone_when_it_cannot_measure() -> None:
    flat = np.full((30, 200), 128.0)  # no contrast
    assert _ocr.respace(list("ab"), _boxes([14, 42]), flat, (0, 0, 200, 30)) == "ab"
    gray = _line_page([(10, 18), (38, 46)])
    assert _ocr.respace(list("ab"), _boxes([14]), gray, (0, 0, 200, 30)) == "ab"  # 1 box for 2


# --- the real model on rendered pages ----------------------------------------------

needs_ocr = pytest.mark.skipif(not _ocr.ocr_available(), reason="the 'ocr' extra is not installed")
PROSE = (  # lines of Cranfield document 1 that the 0/180 line classifier turns over
    "an experimental study of a wing in a propeller slipstream was made in",
    "to slipstream at different angles of attack of the wing and at",
    "different free stream to slipstream velocity ratios . the results",
)


def _png(image: Image.Image) -> bytes:
    import io

    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _prose_page() -> Image.Image:
    image = Image.new("L", (1000, 60 + 36 * len(PROSE)), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=24)
    for number, line in enumerate(PROSE):
        draw.text((40, 30 + 36 * number), line, fill=0, font=font)
    return image


@needs_ocr
def test_a_rendered_page_of_prose_is_read_with_its_words_apart() -> None:
    # Fails if RapidOCR's 0/180 line classifier is turned back on (it flips long
    # Latin lines) or `respace` is removed (the model drops most word spaces).
    lines = _ocr.recognize(_png(_prose_page()))
    assert [text.split() for text, _ in lines] == [line.split() for line in PROSE]


@needs_ocr
@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_a_page_scanned_on_its_side_or_upside_down_is_read_upright(degrees: int) -> None:
    page = _prose_page()
    turned = page.rotate(degrees, expand=True)  # Pillow turns counter-clockwise
    raw = _png(turned)
    assert _ocr.page_orientation(raw) == (4 - degrees // 90) % 4
    lines = _ocr.recognize(raw)
    assert [text.split() for text, _ in lines] == [line.split() for line in PROSE]
    # The boxes are in the turned image's own pixels: each holds ink there.
    gray = np.asarray(turned)
    for _, (x0, y0, x1, y1) in lines:
        assert 0 <= x0 < x1 <= turned.width and 0 <= y0 < y1 <= turned.height
        assert gray[int(y0) : int(y1) + 1, int(x0) : int(x1) + 1].min() < 128


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_unrotate_maps_a_box_found_on_the_turned_page_back_to_the_page(turns: int) -> None:
    page = np.zeros((40, 60))
    page[5:9, 10:30] = 1  # a box x 10..30, y 5..9
    turned = np.rot90(page, turns)
    ys, xs = np.nonzero(turned)
    found = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
    assert _ocr.unrotate(found, turns, 60, 40) == (10, 5, 30, 9)


@needs_ocr
def test_a_page_over_the_ocr_pixel_bound_is_shrunk_first_and_its_boxes_stay_in_its_pixels() -> None:
    page = _page()
    big = page.resize((page.width * 2, page.height * 2))
    normal = _ocr.recognize(_png(page))
    # A bound under the big page's pixels: it is read at half size, like `page`.
    shrunk = _ocr.recognize(_png(big), max_pixels=page.width * page.height * 2)
    assert [text for text, _ in shrunk] == [text for text, _ in normal]
    for (_, small_box), (_, big_box) in zip(normal, shrunk, strict=True):
        assert all(abs(b - 2 * s) <= 6 for s, b in zip(small_box, big_box, strict=True))
