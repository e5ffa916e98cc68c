"""Image test helpers: pages rendered with Pillow's bundled font, for real OCR to read."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest

from rcpkit.engine.ingest.images import image_ocr_available

needs_ocr = pytest.mark.skipif(not image_ocr_available(), reason="the 'ocr' extra is missing")

SCAN = ("Boundary layer transition", "at supersonic speeds")
OTHER = ("Heat transfer in turbines", "cooled by film injection")


def render(lines: tuple[str, ...], fmt: str = "PNG", size: int = 30) -> bytes:
    """A white page with ``lines`` in black, encoded as ``fmt``."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (760, 80 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=size)
    for number, line in enumerate(lines):
        draw.text((30, 40 + 60 * number), line, fill="black", font=font)
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def block(raw: bytes, mime: str = "image/png") -> dict[str, Any]:
    """An inline image Content block."""
    return {"type": "image", "mimeType": mime, "data": base64.b64encode(raw).decode()}
