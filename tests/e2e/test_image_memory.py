"""Decompression bombs through the real CLI (issue 35 item 4): refused, and the server stays small.

A 6,300 x 6,300 bilevel PNG is 39.7 Mpx (under the 40 Mpx per-image cap) in
about 12 KB. Four in one request go past the request's pixel bound (-32013);
four requests of one each at once share the server's pixel budget (those that
do not fit in time are -32011) and are shrunk before OCR. The server's peak RSS
(``VmHWM``) is read from /proc as a bound only: before the fix four such
images took it from 72 MB to 3.4 GB.
"""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path
from typing import Any

import pytest

from rcpkit.engine.ingest.images import image_ocr_available

pytest.importorskip("PIL")
pytestmark = [
    pytest.mark.skipif(not image_ocr_available(), reason="the 'ocr' extra is missing"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status"),
]

INIT = {"protocolVersion": 1, "client": {"name": "t", "version": "1"}}
PEAK_BOUND_MB = 1024  # the fix keeps it near 300 MB; before it, 1.4 GB for one image alone


def bomb() -> dict[str, Any]:
    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (6300, 6300), 1).save(out, format="PNG", optimize=True)
    data = base64.b64encode(out.getvalue()).decode()
    return {"type": "image", "mimeType": "image/png", "data": data}


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_decompression_bombs_are_refused_and_the_server_stays_small(
    spawn: Any, tmp_path: Path
) -> None:
    server = spawn(
        "--engine", "index", "--index", str(tmp_path / "index"), "--embedder", "hashing:64",
        "--create",
    )  # fmt: skip
    assert "result" in server.request(1, "initialize", INIT)
    image = bomb()
    server.send({"jsonrpc": "2.0", "id": 2, "method": "retrieve", "params": {"query": [image] * 4}})
    four = server.recv(timeout=120)["error"]
    documents = [{"id": "bombs", "content": [image] * 4}]
    server.send(
        {"jsonrpc": "2.0", "id": 3, "method": "index/add", "params": {"documents": documents}}
    )
    four_added = server.recv(timeout=120)["error"]
    # Four requests of one bomb each, at once: as many as the server has workers.
    for number in range(4):
        method, params = (
            ("retrieve", {"query": image, "k": 1})
            if number % 2
            else ("index/add", {"documents": [{"id": f"b{number}", "content": [image]}]})
        )
        server.send({"jsonrpc": "2.0", "id": 10 + number, "method": method, "params": params})
    each = {reply["id"]: reply for reply in (server.recv(timeout=120) for _ in range(4))}
    after = server.request(20, "retrieve", {"query": "anything", "k": 1})
    peak = peak_mb(server.process.pid)
    assert (four["code"], four["data"]["field"]) == (-32013, "query[2]"), four
    assert (four_added["code"], four_added["data"]["field"]) == (
        -32013,
        "documents[0].content[2]",
    ), four_added
    assert sorted(each) == [10, 11, 12, 13]
    for reply in each.values():
        # A blank page has no text (-32602), or the budget was full for now (-32011).
        assert reply["error"]["code"] in (-32602, -32011), reply
    assert "result" in after, after
    assert peak < PEAK_BOUND_MB, f"peak RSS {peak:.0f} MB"
