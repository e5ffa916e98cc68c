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
import math
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from rcpkit.engine.ingest._source import FileSource, SkipFile, build_document, read_source_bytes
from rcpkit.engine.ingest._types import PageSpan, SourceDocument

__all__ = [
    "IMAGE_EXTENSIONS",
    "OCR_MAX_PIXELS",
    "OCR_MISSING",
    "OcrLine",
    "join_lines",
    "load_image",
    "ocr_available",
    "ocr_pdf_pages",
    "page_orientation",
    "recognize",
    "respace",
    "set_threads",
    "unrotate",
]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff")
OCR_MISSING = "OCR needs the 'ocr' extra (pip install 'rcpkit[ocr]': rapidocr-onnxruntime, pillow)"
# Pages over this are shrunk before OCR (A4 at 300 dpi is 8.7 Mpx); see `recognize`.
OCR_MAX_PIXELS = 12_000_000
_MIN_SCORE = 0.5  # recognitions below this confidence are noise more often than text
_PDF_SCALE = 200 / 72  # PDF pages are rendered at 200 dpi
_GAP = 0.2  # a word space: ink-free columns at least this fraction of the line's height
_INK_CONTRAST = 64  # a pixel this far from the page's median shade is ink
_MARGIN = 16  # pixels kept around the ink's bounding box
_PROBE_SIDE = 800  # the orientation probe detects lines on the page shrunk to this side
_PROBE_LINES = 3  # lines recognised both ways up to decide a page's orientation
_PROBE_RATIO = 10  # each cut to this many times its height
_THREADS: list[int] = []  # onnxruntime threads per process (set by a worker pool)

Box = tuple[float, float, float, float]
OcrLine = tuple[str, Box]
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


def recognize(image: bytes, max_pixels: int | None = OCR_MAX_PIXELS) -> list[OcrLine]:
    """The text lines of an encoded image with their boxes ``(x0, y0, x1, y1)``.

    A page of more than ``max_pixels`` is shrunk before OCR (a JPEG while it is
    decoded), so what OCR holds stays bounded whatever the image declares
    (issue 35: one 39.7 Mpx PNG of 4.9 KB took 1.4 GB); boxes are in the
    image's own pixels all the same.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(image)) as opened:
            width = opened.size[0]
            factor = _reduction(opened.size, max_pixels)
            if factor > 1 and opened.format == "JPEG":  # DCT scaling: decoded at 1/2..1/8
                opened.draft("RGB", (opened.size[0] // factor, opened.size[1] // factor))
            opened.load()
            page = _shrunk(opened, max_pixels)
            lines = _recognize_pixels(page)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise SkipFile(f"unreadable image ({type(error).__name__})") from None
    except Image.DecompressionBombError:
        # A small file that decodes to more pixels than Pillow's limit would
        # take the memory of the process (and a worker pool's batch with it).
        raise SkipFile("unreadable image (too many pixels: a decompression bomb?)") from None
    scale = width / page.size[0]
    if scale == 1:
        return lines
    return [
        (text, (x0 * scale, y0 * scale, x1 * scale, y1 * scale)) for text, (x0, y0, x1, y1) in lines
    ]


def _reduction(size: tuple[int, int], max_pixels: int | None) -> int:
    """The whole factor each side is divided by to bring ``size`` under ``max_pixels``."""
    pixels = size[0] * size[1]
    if max_pixels is None or pixels <= max_pixels:
        return 1
    return math.ceil(math.sqrt(pixels / max_pixels))


def _shrunk(image: Any, max_pixels: int | None) -> Any:
    factor = _reduction(image.size, max_pixels)
    if factor == 1:
        return image
    # Pillow reduces L and RGB(A); a bilevel or palette page is converted first.
    if image.mode not in ("L", "RGB", "RGBA"):
        image = image.convert("L" if image.mode in ("1", "L") else "RGB")
    return image.reduce(factor)


def _recognize_pixels(image: Any) -> list[OcrLine]:
    import numpy as np

    rgb = np.asarray(image.convert("RGB"))
    left, top, rgb = _ink_crop(rgb)
    if rgb.size == 0:
        return []
    with _lock:  # one model instance per process, one image at a time
        if not _engine:
            _engine.append(_new_engine())
        engine = _engine[0]
        turns = _orientation(engine, np.ascontiguousarray(rgb[:, :, ::-1]))
        upright = np.ascontiguousarray(np.rot90(rgb, turns)) if turns else rgb
        pixels = np.ascontiguousarray(upright[:, :, ::-1])  # BGR
        # No 0/180 line classifier: it judges a long Latin line from its first
        # 192 px, flips good lines and turns them into unspaced garbage (CER 0.36
        # against 0.07 without it on rendered pages; BENCHMARKS.md issue 19).
        # The page's orientation is decided once, above, from several lines.
        found, _ = engine(pixels, use_cls=False, return_word_box=True)
    gray = _gray(upright)
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
    height, width = rgb.shape[:2]
    return [
        (text, _shift(unrotate(box, turns, width, height), left, top))
        for text, box in _reading_order(lines)
    ]


def _gray(rgb: Any) -> Any:
    """The mean of the three channels as one byte a pixel (float64 took 8 a pixel, twice)."""
    import numpy as np

    return (rgb.sum(axis=2, dtype=np.uint16) // 3).astype(np.uint8)


def _ink_crop(rgb: Any) -> tuple[int, int, Any]:
    """The page cut to its ink's bounding box plus a margin, and where the cut starts.

    Scans and rendered pages have wide blank margins (and a short text leaves most
    of a page empty); detection costs in proportion to the pixels it is given.
    Ink is any pixel far from the page's median shade, so dark-on-light and
    light-on-dark pages are both cut. An image without ink comes back empty.
    """
    import numpy as np

    gray = _gray(rgb)
    counts = np.cumsum(np.bincount(gray.ravel(), minlength=256))
    median = int(np.searchsorted(counts, (gray.size + 1) // 2))  # a histogram's, not a sort's
    far = np.abs(np.arange(256) - median) > _INK_CONTRAST
    ink = far[gray]  # a lookup: one byte a pixel, no signed copy of the page
    rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return 0, 0, rgb[:0, :0]
    height, width = gray.shape
    top, bottom = max(0, int(rows[0]) - _MARGIN), min(height, int(rows[-1]) + 1 + _MARGIN)
    left, right = max(0, int(columns[0]) - _MARGIN), min(width, int(columns[-1]) + 1 + _MARGIN)
    return left, top, rgb[top:bottom, left:right]


def _shift(box: tuple[float, float, float, float], left: int, top: int) -> Box:
    return (box[0] + left, box[1] + top, box[2] + left, box[3] + top)


def page_orientation(image: bytes) -> int:
    """Quarter turns counter-clockwise (``numpy.rot90``'s ``k``) that make the page upright."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(image)) as opened:
        rgb = np.asarray(opened.convert("RGB"))
    with _lock:
        if not _engine:
            _engine.append(_new_engine())
        return _orientation(_engine[0], np.ascontiguousarray(rgb[:, :, ::-1]))


def _orientation(engine: Any, pixels: Any) -> int:
    """How the page (BGR) is turned, decided once for the page, never per line.

    Detection on the page shrunk to ``_PROBE_SIDE``: if most lines found are taller
    than wide the page lies on its side and is turned a quarter first. Then the
    ``_PROBE_LINES`` widest lines (cut to ``_PROBE_RATIO`` times their height) are
    recognised as they are and turned half a turn; the reading with the higher
    mean confidence wins. A line classifier deciding line by line flips good Latin
    lines (see `_recognize_pixels`); a page is one orientation.
    """
    import numpy as np

    small = _shrink(pixels, _PROBE_SIDE)
    boxes = _detect(engine, small)
    if not boxes:
        return 0
    sizes = [_extent(box) for box in boxes]
    tall = sum(1 for w, h in sizes if h > 1.5 * w)
    turns = 0
    if tall > len(sizes) - tall:
        turns = 1
        small = np.ascontiguousarray(np.rot90(small, 1))
        boxes = _detect(engine, small)
        if not boxes:
            return 0
    widest = sorted(boxes, key=lambda box: -_extent(box)[0])[:_PROBE_LINES]
    crops = []
    for crop in engine.get_crop_img_list(small, widest):
        height = crop.shape[0]
        crops.append(np.ascontiguousarray(crop[:, : max(1, _PROBE_RATIO * height)]))
    turned = [np.ascontiguousarray(np.rot90(crop, 2)) for crop in crops]
    read, _ = engine.text_rec(crops + turned)
    scores = [float(item[1]) for item in read]
    upright = sum(scores[: len(crops)]) / len(crops)
    flipped = sum(scores[len(crops) :]) / len(crops)
    return (turns + 2) % 4 if flipped > upright else turns


def _detect(engine: Any, pixels: Any) -> list[Any]:
    found, _ = engine.text_det(pixels)
    return [] if found is None else list(found)


def _extent(box: Any) -> tuple[float, float]:
    xs = [float(point[0]) for point in box]
    ys = [float(point[1]) for point in box]
    return max(xs) - min(xs), max(ys) - min(ys)


def _shrink(pixels: Any, side: int) -> Any:
    import cv2

    height, width = pixels.shape[:2]
    scale = side / max(height, width)
    if scale >= 1:
        return pixels
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return cv2.resize(pixels, size, interpolation=cv2.INTER_AREA)


def unrotate(box: Sequence[float], turns: int, width: int, height: int) -> Box:
    """A box ``(x0, y0, x1, y1)`` found on ``numpy.rot90(page, turns)`` in the page's frame.

    ``width`` and ``height`` are the page's (before turning).
    """
    x0, y0, x1, y1 = box
    turns %= 4
    if turns == 1:  # turned x = y, turned y = width - x
        return (width - y1, x0, width - y0, x1)
    if turns == 2:
        return (width - x1, height - y1, width - x0, height - y0)
    if turns == 3:  # turned x = height - y, turned y = x
        return (y0, height - x1, y1, height - x0)
    return (x0, y0, x1, y1)


def _new_engine() -> Any:
    from rapidocr_onnxruntime import RapidOCR

    # Detection at the page's own resolution (only pages over 2000 px are
    # shrunk); the wheel's default scales the short side up to 736 px, which
    # quadruples a wide, short page's pixels for nothing. Lines are recognised
    # one at a time: a batch pads every line to the widest one's width and, on one
    # onnxruntime thread, a batch of 6 costs 1.5x the same lines one by one (6.1 s
    # against 4.0 s for a rendered page's 15 lines; BENCHMARKS.md issue 19).
    return RapidOCR(det_limit_type="max", det_limit_side_len=2000, rec_batch_num=1, **_threads())


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
