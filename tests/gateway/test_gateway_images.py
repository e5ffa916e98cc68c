"""A gateway passes image blocks only to the engines that advertise ``image`` (§4.8, §16.2)."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import msgspec
import pytest
from gateway_support import Engine, connector, registry

from rcpkit.client import Client, connect_in_memory
from rcpkit.client.errors import OptionUnsupported
from rcpkit.engine.config import load_config
from rcpkit.engine.ingest.images import image_ocr_available
from rcpkit.engine.open import open_engine
from rcpkit.federation import Federation
from rcpkit.gateway import build_gateway
from rcpkit.handlers.engine import build_engine_app
from rcpkit.protocol.content import Content

pytest.importorskip("PIL")
from PIL import Image, ImageDraw, ImageFont

pytestmark = pytest.mark.skipif(not image_ocr_available(), reason="the 'ocr' extra is missing")

DOCS = {"t1": "supersonic boundary layer notes", "t2": "turbine cooling"}


def _png(text: str) -> Content:
    image = Image.new("RGB", (760, 140), "white")
    ImageDraw.Draw(image).text((30, 40), text, fill="black", font=ImageFont.load_default(size=30))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Content(
        type="image", mime_type="image/png", data=base64.b64encode(out.getvalue()).decode()
    )


async def test_an_image_query_goes_to_the_ocr_engine_and_skips_the_text_only_one(
    tmp_path: Path,
) -> None:
    engine = open_engine(load_config(None, index=tmp_path / "index", embedder="hashing:64"))
    text_only = {"txt": Engine("T", DOCS)}
    base = connector(text_only)

    async def connect(spec: Any) -> Client:
        if spec.id == "img":
            return await connect_in_memory(build_engine_app(engine).server)
        return await base(spec)

    federation = Federation(
        registry([{"id": "img", "write": True}, {"id": "txt"}]), identity="gw", connector=connect
    )
    await federation.connect()
    client = await connect_in_memory(build_gateway(federation))
    try:
        assert "image" in client.raw_capabilities["retrieve"]["modalities"]
        await client.index_add([{"id": "scan", "content": [_png("Boundary layer transition")]}])
        query = msgspec.to_builtins(_png("boundary layer"))
        result = await client.call("retrieve", {"query": query, "k": 3}, gate=True)
        text = await client.retrieve("boundary layer", k=3)
    finally:
        await client.close()
        await federation.close()
        engine.close()
    assert result["_meta"]["federation"]["answered"] == ["img"]
    assert any("engine 'txt' skipped" in note for note in result["usage"]["notes"])
    assert len(text_only["txt"].seen) == 1  # only the text query reached the text-only engine
    assert {hit.meta["engine"] for hit in text.hits if hit.meta} == {"img", "txt"}
    assert result["hits"][0]["chunk"]["docId"] == "scan"


async def test_the_client_refuses_an_image_block_to_a_text_only_server() -> None:
    client = await connect_in_memory(Engine("T", DOCS).app().server)
    try:
        with pytest.raises(OptionUnsupported) as caught:
            await client.retrieve(_png("boundary layer"), k=1)
    finally:
        await client.close()
    assert caught.value.data is not None and caught.value.data["option"] == "modality"
