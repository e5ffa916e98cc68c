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
    "respace",
    "set_threads",
]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff")
OCR_MISSING = "OCR needs the 'ocr' extra (pip install 'rcpkit[ocr]': rapidocr-onnxruntime, pillow)"
_MIN_SCORE = 0.5  # recognitions below this confidence are noise more often than text
_PDF_SCALE = 200 / 72  # PDF pages are rendered at 200 dpi
_GAP = 0.2  # a word space: ink-free columns at least this fraction of the line's height
_THREADS: list[int] = []  # onnxruntime threads per process (set by a worker pool)

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

    rgb = np.asarray(image.convert("RGB"))
    pixels = np.ascontiguousarray(rgb[:, :, ::-1])  # BGR
    gray = rgb.mean(axis=2)
    with _lock:  # one model instance per process, one image at a time
        if not _engine:
            _engine.append(_new_engine())
        # No 0/180 line classifier: it judges a long Latin line from its first
        # 192 px, flips good lines and turns them into unspaced garbage (CER 0.36
        # against 0.07 without it on rendered pages; BENCHMARKS.md issue 19).
        found, _ = _engine[0](pixels, use_cls=False, return_word_box=True)
    lines: list[OcrLine] = []
    for item in found or []:
        box, text, score = item[0], str(item[1]), float(item[2])
        if score < _MIN_SCORE or not text.strip():
            continue
        xs = [float(point[0]) for point in box]
        ys = [float(point[1]) for point in box]
        bounds = (min(xs), min(ys), max(xs), max(ys))
        if len(item) >= 5:
            text = respace(item[4], item[3], gray, bounds)
        lines.append((" ".join(text.split()), bounds))
    return _reading_order(lines)


def _new_engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    # Detection at the page's own resolution (only pages over 2000 px are
    # shrunk); the wheel's default scales the short side up to 736 px, which
    # quadruples a wide, short page's pixels for nothing.
    return RapidOCR(det_limit_type="max", det_limit_side_len=2000, **_threads())


def set_threads(count: int) -> None:
    """onnxruntime threads for this process's model (a pool worker takes 1); before first use."""
    _THREADS[:] = [count]


def _threads() -> dict[str, int]:
    count = _THREADS[0] if _THREADS else 0
    return {"intra_op_num_threads": count, "inter_op_num_threads": 1} if count else {}


def respace(chars: Sequence[str], boxes: Sequence[Any], gray: Any, line: Sequence[float]) -> str:
    """The line's characters with a space wherever the page shows a word gap.

    The recognition model (trained mostly on Chinese) often reads a Latin line's
    letters right but drops the spaces. Each character comes with the box of its
    CTC column; between two consecutive characters the line's crop of the page
    is inspected: a run of ink-free pixel columns at least ``_GAP`` of the line's
    height wide (a word space; letters of one word are closer) that lies between
    the two characters' centres is a space. Spaces the model did read are kept.
    """
    if len(chars) != len(boxes) or not chars:
        return "".join(chars)
    x0, y0, x1, y1 = (round(v) for v in line)
    height, width = gray.shape
    x0, x1, y0, y1 = max(x0, 0), min(x1, width), max(y0, 0), min(y1, height)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return "".join(chars)
    crop = gray[y0:y1, x0:x1]
    low, high = float(crop.min()), float(crop.max())
    if high - low < 32:  # no contrast: nothing to measure
        return "".join(chars)
    middle = (low + high) / 2
    # Dark text on a light page or the reverse: ink is the minority side.
    ink = crop < middle if (crop < middle).mean() <= 0.5 else crop > middle
    blank = ~ink.any(axis=0)
    gaps = _runs(blank, max(2.0, _GAP * (y1 - y0)))
    centres = [(min(p[0] for p in box) + max(p[0] for p in box)) / 2 - x0 for box in boxes]
    out = [chars[0]]
    for index in range(1, len(chars)):
        left, right = chars[index - 1], chars[index]
        if left != " " and right != " ":
            a, b = centres[index - 1], centres[index]
            if any(a < (start + end) / 2 < b for start, end in gaps):
                out.append(" ")
        out.append(right)
    return "".join(out)


def _runs(mask: Any, minimum: float) -> list[tuple[int, int]]:
    """The ``[start, end)`` runs of True in a 1-D mask at least ``minimum`` long."""
    runs: list[tuple[int, int]] = []
    start = -1
    for index, value in enumerate(mask.tolist()):
        if value and start < 0:
            start = index
        elif not value and start >= 0:
            if index - start >= minimum:
                runs.append((start, index))
            start = -1
    return runs


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
