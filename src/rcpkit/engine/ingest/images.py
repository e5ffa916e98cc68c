"""Image bytes to text through OCR, for images that arrive in a request (§4.8, issue 19).

`rcpkit index` reads image files through ``_ocr.load_image``; an ``index/add``
document, a ``retrieve``/``rerank`` query or an ``embed`` input may instead carry
an ``image`` Content block. `read_image` is that path: it checks that the bytes
are an image of the declared ``mimeType`` (PNG, JPEG, WebP or TIFF, as Pillow
reads them), bounds its size, and returns the recognised lines (RapidOCR's
PP-OCRv4, the same model and reading order as files) with their boxes in pixels.

Image support is OCR text only: no visual embedding is made (no CLIP or ColPali
weights are available offline), so an image without legible text has nothing to
retrieve by.
"""

from __future__ import annotations

import importlib.util
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rcpkit.engine.ingest import _ocr
from rcpkit.engine.ingest._types import SkipFile

__all__ = [
    "IMAGE_MIME_TYPES",
    "MAX_IMAGE_PIXELS",
    "MAX_REQUEST_PIXELS",
    "OCR_MISSING",
    "SERVER_PIXEL_BUDGET",
    "ImageRejected",
    "ImageText",
    "PixelBudget",
    "SERVER_PIXELS",
    "image_ocr_available",
    "read_image",
]

# mimeType -> the format Pillow must find in the bytes.
IMAGE_MIME_TYPES = {
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WEBP",
    "image/tiff": "TIFF",
}
# §15.5: a 1 MB PNG can decode to gigabytes; OCR cost grows with the pixels too.
MAX_IMAGE_PIXELS = 40_000_000
# Decoded pixels summed over one request's images (issue 35: four 39.7 Mpx PNGs
# of 4.9 KB each, in one request of 20 KB, took the server from 72 MB to 3.4 GB).
MAX_REQUEST_PIXELS = 2 * MAX_IMAGE_PIXELS
# Decoded pixels this process holds at once across every request's OCR
# (Pillow keeps up to 4 bytes a pixel: at most 320 MB of images in flight).
SERVER_PIXEL_BUDGET = 2 * MAX_IMAGE_PIXELS
OCR_MISSING = _ocr.OCR_MISSING


class ImageRejected(Exception):
    """The block cannot be read: ``kind`` is ``"mimeType"``, ``"data"``, ``"size"`` or ``"busy"``.

    ``"size"``: the image, or the request's images together, exceed a limit
    (retrying unchanged cannot succeed); ``"busy"``: the process's pixel budget is
    held by other requests' images for now (a retry later can).
    """

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ImageText:
    """What OCR read: the lines in reading order, each ``(text, (x0, y0, x1, y1))``."""

    lines: list[_ocr.OcrLine]
    width: int
    height: int

    @property
    def text(self) -> str:
        return self.joined[0]

    @property
    def joined(self) -> tuple[str, list[list[float]]]:
        """One line per recognised line, and each line's ``[start, end, x0, y0, x1, y1]``."""
        return _ocr.join_lines(self.lines)


class PixelBudget:
    """Decoded pixels held at once by every image being read in this process.

    An image holds its pixels from before it is decoded until its OCR is done;
    one that does not fit waits (up to ``wait`` seconds) for others to finish,
    then is refused as ``"busy"``. The memory of concurrent OCR is bounded by the
    budget however many requests arrive together.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._held = 0
        self._free = threading.Condition()

    @property
    def held(self) -> int:
        return self._held

    @contextmanager
    def hold(self, pixels: int, wait: float) -> Iterator[None]:
        with self._free:
            fits = self._free.wait_for(lambda: self._held + pixels <= self.capacity, max(wait, 0))
            if not fits:
                raise ImageRejected(
                    "busy",
                    f"{pixels} pixels do not fit the {self.capacity - self._held} of the "
                    f"server's image budget ({self.capacity}) left by other requests",
                )
            self._held += pixels
        try:
            yield
        finally:
            with self._free:
                self._held -= pixels
                self._free.notify_all()


SERVER_PIXELS = PixelBudget(SERVER_PIXEL_BUDGET)


def image_ocr_available() -> bool:
    """Whether the ``ocr`` extra (RapidOCR, Pillow) is installed, without importing it.

    Importing RapidOCR loads onnxruntime and OpenCV; doing that while a server
    starts (its models loading on other threads) made a CLI that exits at once
    abort in native code ("terminate called without an active exception"). The
    model is imported at the first image instead.
    """
    for name in ("rapidocr_onnxruntime", "PIL"):
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # ValueError: sys.modules[name] is None
            return False
    return True


def read_image(
    raw: bytes,
    mime_type: str,
    *,
    allowance: int = MAX_REQUEST_PIXELS,
    budget: PixelBudget = SERVER_PIXELS,
    wait: float = 0.0,
) -> ImageText:
    """OCR of one encoded image whose declared type is ``mime_type``.

    Raises `ImageRejected`: ``mimeType`` for a type outside `IMAGE_MIME_TYPES`,
    ``data`` for bytes that are not an image of that type, ``size`` past
    `MAX_IMAGE_PIXELS` or past ``allowance`` (the pixels the request may still
    decode), ``busy`` when ``budget`` has no room within ``wait`` seconds. The
    header alone is read before these checks. Blocking (seconds for a page):
    call it from a worker.
    """
    expected = IMAGE_MIME_TYPES.get(mime_type.split(";", 1)[0].strip().lower())
    if expected is None:
        supported = ", ".join(IMAGE_MIME_TYPES)
        raise ImageRejected("mimeType", f"{mime_type!r} is not read (supported: {supported})")
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as opened:  # reads the header only
            found, (width, height) = opened.format, opened.size
    except Image.DecompressionBombError:
        raise ImageRejected("size", f"more pixels than the limit of {MAX_IMAGE_PIXELS}") from None
    except (UnidentifiedImageError, OSError, ValueError) as error:
        raise ImageRejected("data", f"not a decodable image ({type(error).__name__})") from None
    if found != expected:
        raise ImageRejected("data", f"the bytes are {found or 'unknown'}, not {mime_type}")
    pixels = width * height
    if pixels > MAX_IMAGE_PIXELS:
        raise ImageRejected(
            "size", f"{width}x{height} pixels exceed the limit of {MAX_IMAGE_PIXELS}"
        )
    if pixels > allowance:
        raise ImageRejected(
            "size",
            f"{width}x{height} pixels take the request's images past its limit of "
            f"{MAX_REQUEST_PIXELS} decoded pixels",
        )
    try:
        with budget.hold(pixels, wait):
            lines = _ocr.recognize(raw)
    except SkipFile as skipped:  # truncated or corrupt past the header
        raise ImageRejected("data", skipped.reason) from None
    return ImageText(lines=lines, width=width, height=height)
