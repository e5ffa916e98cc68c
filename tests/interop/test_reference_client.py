"""Wire compatibility: the reference SDK (PyPI ``rcp-protocol``) as a test peer."""

from __future__ import annotations

import base64
import io
import sys
from typing import Any

import pytest

rcp = pytest.importorskip("rcp")


def test_the_reference_client_completes_a_session_against_rcpkit() -> None:
    command = [
        sys.executable,
        "-m",
        "rcpkit",
        "serve",
        "--stdio",
        "--engine",
        "keyword",
        "--sample",
    ]
    client = rcp.connect_stdio(command)
    try:
        assert client.protocol_version == 1
        assert client.server["name"] == "rcpkit-keyword"
        assert client.supports(rcp.Capability.Retrieve)
        assert not client.supports(rcp.Capability.Embed)
        assert client.ping(nonce=5) == {"nonce": 5}
        result = client.search("learned sparse SPLADE", k=2)
        assert result["hits"][0]["id"] == "learned-sparse"
        with pytest.raises(rcp.RcpError):
            client.embed(["gated client-side"])  # unadvertised: refused before any I/O
        with pytest.raises(rcp.RcpError) as caught:
            client.call("embed", {"inputs": ["x"]})  # sent anyway: the server refuses it
        assert "-32003" in str(caught.value)
    finally:
        client.shutdown()


def test_the_reference_client_sends_image_blocks_that_rcpkit_reads_by_ocr(tmp_path: Any) -> None:
    from rcpkit.engine.ingest.images import image_ocr_available

    if not image_ocr_available():
        pytest.skip("the 'ocr' extra is missing")
    from PIL import Image, ImageDraw, ImageFont

    def png(text: str) -> dict[str, str]:
        image = Image.new("RGB", (760, 140), "white")
        font = ImageFont.load_default(size=30)
        ImageDraw.Draw(image).text((30, 40), text, fill="black", font=font)
        out = io.BytesIO()
        image.save(out, format="PNG")
        data = base64.b64encode(out.getvalue()).decode()
        return {"type": "image", "mimeType": "image/png", "data": data}

    command = [
        sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
        "--index", str(tmp_path / "index"), "--embedder", "hashing:64", "--create",
    ]  # fmt: skip
    client = rcp.connect_stdio(command)
    try:
        assert "image" in client.capabilities["retrieve"]["modalities"]
        added = client.index_add(
            {"documents": [{"id": "scan", "content": [png("Boundary layer transition")]},
                           {"id": "other", "text": "Heat transfer in turbines."}]}
        )  # fmt: skip
        assert added["ids"] == ["scan", "other"]
        found = client.search(png("boundary layer"), k=1)
        vectors = client.embed([png("Boundary layer transition")])
    finally:
        client.shutdown()
    assert found["hits"][0]["id"].startswith("scan")
    assert any("OCR" in note for note in found["usage"]["notes"])
    assert len(vectors) == 1 and len(vectors[0]) == 64
