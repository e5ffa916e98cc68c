"""End to end (issue 19): the real ``rcpkit serve --stdio`` reads an image document by OCR.

The in-repo client spawns the CLI, adds a page rendered here (Pillow's bundled
font), and finds it again with a text query and with an image of a query.
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import pytest

from rcpkit.client import Client
from rcpkit.engine.ingest.images import image_ocr_available
from rcpkit.protocol.content import Content

pytest.importorskip("PIL")
from PIL import Image, ImageDraw, ImageFont

pytestmark = pytest.mark.skipif(not image_ocr_available(), reason="the 'ocr' extra is missing")


def _png(*lines: str) -> Content:
    image = Image.new("RGB", (760, 80 + 60 * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=30)
    for number, line in enumerate(lines):
        draw.text((30, 40 + 60 * number), line, fill="black", font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Content(
        type="image", mime_type="image/png", data=base64.b64encode(out.getvalue()).decode()
    )


async def test_the_cli_indexes_an_image_and_finds_it_by_text_and_by_image(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
        "--index", str(tmp_path / "index"), "--embedder", "hashing:64", "--create",
    ]  # fmt: skip
    async with await Client.connect_stdio(command, connect_timeout=60) as client:
        assert "image" in (client.capabilities.index.modalities or [])  # type: ignore[union-attr]
        added = await client.index_add(
            [
                {
                    "id": "scan",
                    "content": [_png("Boundary layer transition", "at supersonic speeds")],
                },
                {"id": "prose", "text": "Heat transfer in turbines cooled by film injection."},
            ]
        )
        by_text = await client.retrieve("supersonic boundary layer", k=2)
        by_image = await client.retrieve(_png("supersonic transition"), k=2)
    assert added.ids == ["scan", "prose"]
    for result in (by_text, by_image):
        top = result.hits[0]
        assert top.chunk is not None and top.chunk.doc_id == "scan"
        assert top.modality == "image"
        assert top.citation is not None and top.citation.page == 1
    assert by_image.usage is not None and by_image.usage.notes is not None
    assert any("OCR text was used" in note for note in by_image.usage.notes)
    assert by_text.usage is None or not any("OCR" in n for n in by_text.usage.notes or [])
