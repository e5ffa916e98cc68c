"""Images through OCR (optional extra ``ocr``: RapidOCR's PP-OCRv4 ONNX models, Pillow).

An image file becomes one document of one page: the recognised lines in reading
order (top to bottom, then left to right), one per line of text, with
``meta.regions`` holding ``[page, start, end, x0, y0, x1, y1]`` per line: the page,
the character range of ``SourceDocument.text`` and the box it was read from (pixels
for an image, PDF points from the top-left for a PDF page), so a citation's span maps
back to a region of the page. `ocr_pdf_pages` reads the PDF pages that have no text
layer the same way (rendered by pypdfium2). ``meta.textOf = "ocr"`` says the
offsets are into recognised text, not into the file. Without the extra, an image is
skipped with a reason.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from rcpkit.engine.ingest._source import FileSource, SkipFile, build_document, read_source_bytes
from rcpkit.engine.ingest._types import PageSpan, SourceDocument

__all__ = [
    "IMAGE_EXTENSIONS",
    "OCR_MISSING",
    "OcrLine",
    "join_lines",
    "load_image",
    "ocr_available",
    "ocr_pdf_pages",
    "recognize",
]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff")
OCR_MISSING = "OCR needs the 'ocr' extra (pip install 'rcpkit[ocr]': rapidocr-onnxruntime, pillow)"
_MIN_SCORE = 0.5  # recognitions below this confidence are noise more often than text
_PDF_SCALE = 200 / 72  # PDF pages are rendered at 200 dpi

OcrLine = tuple[str, tuple[float, float, float, float]]
_lock = threading.Lock()
_engine: list[Any] = []


def ocr_available() -> bool:
    try:
        import rapidocr_onnxruntime  # noqa: F401
        from PIL import Image  # noqa: F401
    except ImportError:
        return False
    return True


def load_image(source: FileSource) -> Iterable[SourceDocument]:
    if not ocr_available():
        raise SkipFile(OCR_MISSING)
    raw = read_source_bytes(source)
    lines = recognize(raw)
    text, regions = join_lines(lines)
    regions = [[1, *region] for region in regions]
    if not text:
        raise SkipFile("OCR found no text in the image")
    pages = [PageSpan(page=1, start=0, end=len(text))]
    extra = {"textOf": "ocr", "regions": regions}
    return [build_document(source, raw, text=text, title=None, pages=pages, extra=extra)]


def ocr_pdf_pages(raw: bytes, numbers: Sequence[int]) -> dict[int, list[OcrLine]]:
    """OCR of the given 1-based pages of a PDF, boxes in PDF points; {} without pypdfium2."""
    try:
        import pypdfium2
    except ImportError:
        return {}
    out: dict[int, list[OcrLine]] = {}
    document = pypdfium2.PdfDocument(raw)
    try:
        for number in numbers:
            page = document[number - 1]
            image = page.render(scale=_PDF_SCALE).to_pil()
            lines = _recognize_pixels(image)
            out[number] = [
                (text, (x0 / _PDF_SCALE, y0 / _PDF_SCALE, x1 / _PDF_SCALE, y1 / _PDF_SCALE))
                for text, (x0, y0, x1, y1) in lines
            ]
    finally:
        document.close()
    return out


def recognize(image: bytes) -> list[OcrLine]:
    """The text lines of an encoded image with their boxes ``(x0, y0, x1, y1)``."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(image)) as opened:
            opened.load()
            return _recognize_pixels(opened)
    except (UnidentifiedImageError, OSError) as error:
        raise SkipFile(f"unreadable image ({type(error).__name__})") from None


def _recognize_pixels(image: Any) -> list[OcrLine]:
    import numpy as np

    pixels = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])  # BGR
    with _lock:  # one model instance, one image at a time (onnxruntime uses the cores)
        if not _engine:
            from rapidocr_onnxruntime import RapidOCR

            _engine.append(RapidOCR())
        found, _ = _engine[0](pixels)
    lines: list[OcrLine] = []
    for box, text, score in found or []:
        if float(score) < _MIN_SCORE or not str(text).strip():
            continue
        xs = [float(point[0]) for point in box]
        ys = [float(point[1]) for point in box]
        lines.append((str(text).strip(), (min(xs), min(ys), max(xs), max(ys))))
    return _reading_order(lines)


def _reading_order(lines: list[OcrLine]) -> list[OcrLine]:
    """Top to bottom; boxes whose vertical centres are within half a line are one row."""
    ordered = sorted(lines, key=lambda line: (line[1][1] + line[1][3]) / 2)
    rows: list[list[OcrLine]] = []
    for line in ordered:
        centre = (line[1][1] + line[1][3]) / 2
        if rows:
            last = rows[-1][-1][1]
            if abs(centre - (last[1] + last[3]) / 2) < (last[3] - last[1]) / 2:
                rows[-1].append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda item: item[1][0])]


def join_lines(lines: Sequence[OcrLine]) -> tuple[str, list[list[float]]]:
    """The text (one recognised line per line) and each line's ``[start, end, *box]``."""
    parts: list[str] = []
    regions: list[list[float]] = []
    position = 0
    for text, box in lines:
        if parts:
            parts.append("\n")
            position += 1
        parts.append(text)
        regions.append([position, position + len(text), *(round(v, 1) for v in box)])
        position += len(text)
    return "".join(parts), regions
