"""Images as Content blocks through the RCP surface (§4.8, issue 19): read by real OCR.

The pages are rendered here with Pillow's bundled font and read by RapidOCR
(the ``ocr`` extra); nothing is canned. Without the extra, image blocks stay
-32005 and the message names the extra.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_support import Calls, make_engine, serving
from image_support import OTHER, SCAN, block, needs_ocr, render

from rcpkit.engine.engine import Engine
from rcpkit.handlers.engine import build_engine_app
from support import running

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402


def words(text: str) -> set[str]:
    return {word.strip(".,").casefold() for word in text.split()}


@needs_ocr
async def test_an_image_document_is_indexed_with_pages_regions_and_modality(
    engine: Engine,
) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        added = await call.result(
            "index/add",
            {
                "documents": [
                    {"id": "scan", "content": [block(render(SCAN))], "meta": {"box": 7}},
                    {"id": "prose", "text": "Turbine blades are cooled by film injection."},
                ]
            },
        )
        hits = (await call.result("retrieve", {"query": "supersonic transition", "k": 2}))["hits"]
        images_only = await call.result(
            "retrieve",
            {
                "query": "film injection cooling",
                "k": 5,
                "filter": {"field": "modality", "op": "eq", "value": "image"},
            },
        )
    assert added["ids"] == ["scan", "prose"]
    top = hits[0]
    assert top["chunk"]["docId"] == "scan"
    assert top["modality"] == "image"
    assert {"boundary", "layer", "transition", "supersonic", "speeds"} <= words(top["text"])
    assert top["citation"]["page"] == 1
    meta = top["meta"]
    assert meta["textOf"] == "ocr" and meta["box"] == 7
    assert meta["images"] == [
        {"page": 1, "block": 0, "mimeType": "image/png", "width": 760, "height": 200}
    ]
    assert len(meta["regions"]) == 2
    offset = top["citation"]["start"]
    for page, start, end, x0, y0, x1, y1 in meta["regions"]:
        assert page == 1 and top["text"][start - offset : end - offset].strip()
        assert 0 <= x0 < x1 <= 760 and 0 <= y0 < y1 <= 200
    # The modality is a filter field: only the image document, whatever the query.
    assert {hit["chunk"]["docId"] for hit in images_only["hits"]} == {"scan"}


@needs_ocr
async def test_text_and_images_in_one_document_each_image_its_own_page(engine: Engine) -> None:
    content = [
        block(render(SCAN)),
        {"type": "text", "text": "A caption about wind tunnels."},
        block(render(OTHER, "JPEG"), "image/jpeg"),
    ]
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "deck", "content": content}]})
        found = await call.result(
            "retrieve", {"query": "turbines film injection", "k": 10, "unit": "page"}
        )
    pages = {hit["citation"].get("page") for hit in found["hits"]}
    assert 2 in pages  # the JPEG is the document's second image, its page 2
    second = next(hit for hit in found["hits"] if hit["citation"].get("page") == 2)
    assert {"turbines", "injection"} <= words(second["text"])
    assert all(region[0] == 2 for region in second["meta"]["regions"])


@needs_ocr
async def test_an_image_query_is_its_ocr_text_and_usage_says_so(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result(
            "index/add",
            {
                "documents": [
                    {"id": "bl", "text": "Boundary layer transition at supersonic speeds."},
                    {"id": "ht", "text": "Heat transfer in turbines cooled by film injection."},
                ]
            },
        )
        found = await call.result("retrieve", {"query": block(render(SCAN)), "k": 2})
        mixed = await call.result(
            "retrieve",
            {"query": [{"type": "text", "text": "turbines"}, block(render(OTHER))], "k": 1},
        )
        embedded = await call.result(
            "embed", {"inputs": [block(render(SCAN)), "Boundary layer transition"]}
        )
    assert found["hits"][0]["chunk"]["docId"] == "bl"
    notes = found["usage"]["notes"]
    assert any("`query`" in note and "OCR text" in note for note in notes)
    assert mixed["hits"][0]["chunk"]["docId"] == "ht"
    assert any("`query[1]`" in note for note in mixed["usage"]["notes"])
    assert len(embedded["vectors"]) == 2
    assert any("`inputs[0]`" in note for note in embedded["usage"]["notes"])


@needs_ocr
async def test_rerank_reads_an_image_query_and_image_passages(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "index", colbert_rerank=True)
    try:
        async with serving(engine) as peer:
            call = Calls(peer)
            result = await call.result(
                "rerank",
                {
                    "query": block(render(("supersonic transition",))),
                    "passages": [
                        "Heat transfer in turbines.",
                        block(render(SCAN)),
                    ],
                },
            )
    finally:
        engine.close()
    assert result["order"][0] == 1
    notes = result["usage"]["notes"]
    assert any("`query`" in note for note in notes)
    assert any("`passages[1]`" in note for note in notes)


@needs_ocr
async def test_the_image_modality_is_advertised_on_every_capability_that_reads_it(
    engine: Engine,
) -> None:
    async with running(build_engine_app(engine), initialize=False) as peer:
        reply = await peer.request("init", "initialize", {"protocolVersion": 1})
        info = await peer.request("info", "info", {})
    for result in (reply["result"], info["result"]):
        capabilities = result["capabilities"]
        for key in ("retrieve", "embed", "index"):
            assert capabilities[key]["modalities"] == ["text", "code", "image"], key
        assert "image" not in capabilities["multiVector"]["modalities"]  # not read there
        assert "unavailableModalities" not in result["_meta"]


BAD = [
    ("bad base64", {"type": "image", "mimeType": "image/png", "data": "%%%not base64%%%"}),
    ("not an image", {"type": "image", "mimeType": "image/png", "data": "aGVsbG8gd29ybGQ="}),
]


@needs_ocr
@pytest.mark.parametrize(("why", "bad"), BAD, ids=[why for why, _ in BAD])
async def test_undecodable_data_is_invalid_params_and_the_batch_writes_nothing(
    engine: Engine, why: str, bad: dict[str, Any]
) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        documents = [
            {"id": "fine", "text": "Boundary layer transition at supersonic speeds."},
            {"id": "broken", "content": [{"type": "text", "text": "caption"}, bad]},
        ]
        error = await call.error("index/add", {"documents": documents})
        query = await call.error("retrieve", {"query": bad})
        after = await call.result("retrieve", {"query": "boundary layer", "k": 5})
    assert (error["code"], error["data"]["field"]) == (-32602, "documents[1].content[1].data")
    assert (query["code"], query["data"]["field"]) == (-32602, "query.data")
    assert after["hits"] == []  # the good document of the failed batch was not written


@needs_ocr
async def test_a_png_declared_as_jpeg_is_invalid_params(engine: Engine) -> None:
    async with serving(engine) as peer:
        error = await Calls(peer).error("embed", {"inputs": [block(render(SCAN), "image/jpeg")]})
    assert (error["code"], error["data"]["field"]) == (-32602, "inputs[0].data")
    assert "PNG" in error["message"]


@needs_ocr
async def test_an_unsupported_mime_type_is_option_unsupported(engine: Engine) -> None:
    gif = render(SCAN, "GIF")
    async with serving(engine) as peer:
        call = Calls(peer)
        error = await call.error("retrieve", {"query": block(gif, "image/gif")})
        svg = await call.error(
            "index/add",
            {"documents": [{"id": "x", "content": [block(b"<svg/>", "image/svg+xml")]}]},
        )
    assert (error["code"], error["data"]["option"]) == (-32005, "mimeType")
    assert "image/gif" in error["message"]
    assert (svg["code"], svg["data"]["option"]) == (-32005, "mimeType")


@needs_ocr
async def test_a_uri_image_is_invalid_params_rcpkit_fetches_none(engine: Engine) -> None:
    uri = {"type": "image", "mimeType": "image/png", "uri": "https://example.com/page.png"}
    async with serving(engine) as peer:
        call = Calls(peer)
        query = await call.error("retrieve", {"query": uri})
        added = await call.error("index/add", {"documents": [{"id": "u", "content": [uri]}]})
    assert (query["code"], query["data"]["field"]) == (-32602, "query")
    assert (added["code"], added["data"]["field"]) == (-32602, "documents[0].content[0]")


@needs_ocr
async def test_an_image_without_legible_text(engine: Engine) -> None:
    blank = io.BytesIO()
    Image.new("RGB", (400, 200), "white").save(blank, format="PNG")
    async with serving(engine) as peer:
        call = Calls(peer)
        query = await call.error("retrieve", {"query": block(blank.getvalue())})
        added = await call.error(
            "index/add", {"documents": [{"id": "b", "content": [block(blank.getvalue())]}]}
        )
        embedded = await call.error("embed", {"inputs": [block(blank.getvalue())]})
    assert (query["code"], query["data"]["field"]) == (-32602, "query")
    assert "no legible text" in query["message"]
    assert (added["code"], added["data"]["field"]) == (-32602, "documents[0].content")
    assert (embedded["code"], embedded["data"]["field"]) == (-32602, "inputs[0]")


async def test_without_the_ocr_extra_image_blocks_are_option_unsupported_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # the import fails
    engine = make_engine(tmp_path / "index")
    image = {"type": "image", "mimeType": "image/png", "data": "AAAA"}
    try:
        async with running(build_engine_app(engine), initialize=False) as peer:
            init = await peer.request("init", "initialize", {"protocolVersion": 1})
            errors = [
                (await peer.request(n, method, params))["error"]
                for n, (method, params) in enumerate(
                    [
                        ("retrieve", {"query": image}),
                        ("embed", {"inputs": [image]}),
                        ("index/add", {"documents": [{"id": "i", "content": [image]}]}),
                    ]
                )
            ]
    finally:
        engine.close()
    capabilities = init["result"]["capabilities"]
    assert capabilities["retrieve"]["modalities"] == ["text", "code"]
    assert capabilities["index"]["modalities"] == ["text", "code"]
    assert "'ocr' extra" in init["result"]["_meta"]["unavailableModalities"]["image"]
    for error in errors:
        assert (error["code"], error["data"]["option"]) == (-32005, "modality")
        assert "'ocr' extra" in error["message"]


@needs_ocr
async def test_ocr_runs_off_the_event_loop_and_stops_when_cancelled(engine: Engine) -> None:
    pages = [block(render(SCAN)) for _ in range(6)]
    documents = [
        {"id": "fine", "text": "Heat transfer in turbines cooled by film injection."},
        {"id": "slow", "content": pages},
    ]
    async with serving(engine) as peer:
        add = {"documents": documents}
        peer.send({"jsonrpc": "2.0", "id": 1, "method": "index/add", "params": add})
        peer.send({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {}})
        first = await peer.recv(timeout=30)
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 1}})
        cancelled = await peer.recv(timeout=30)
        call = Calls(peer)
        later = [{"id": "later", "content": [block(render(OTHER))]}]
        await call.result("index/add", {"documents": later})
        found = await call.result("retrieve", {"query": "turbines film injection", "k": 5})
    # The loop answered the ping while the six pages were being read.
    assert first["id"] == 2 and "result" in first
    assert cancelled["id"] == 1 and cancelled["error"]["code"] == -32006
    # Nothing of the cancelled batch was written, not even its text-only document.
    assert {hit["chunk"]["docId"] for hit in found["hits"]} == {"later"}


@needs_ocr
async def test_ocr_of_a_request_stops_at_its_deadline(engine: Engine) -> None:
    pages = [block(render(SCAN)) for _ in range(6)]
    documents = [{"id": "slow", "content": pages}]
    async with serving(engine) as peer:
        call = Calls(peer)
        late = await call.error("index/add", {"documents": documents, "_meta": {"deadlineMs": 50}})
        query = await call.error("retrieve", {"query": pages, "_meta": {"deadlineMs": 50}})
        found = await call.result("retrieve", {"query": "boundary layer", "k": 5})
    assert late["code"] == -32014 and query["code"] == -32014
    assert found["hits"] == []


@needs_ocr
async def test_a_uri_image_is_fetched_only_under_the_prefixes_the_operator_allowed(
    tmp_path: Path,
) -> None:
    scans, other = tmp_path / "scans", tmp_path / "other"
    scans.mkdir()
    other.mkdir()
    (scans / "page.png").write_bytes(render(SCAN))
    (other / "page.png").write_bytes(render(OTHER))
    (scans / "escape.png").symlink_to(other / "page.png")
    prefix = scans.as_uri() + "/"
    engine = make_engine(tmp_path / "index", fetch_uris=[prefix])

    def image(uri: str) -> dict[str, Any]:
        return {"type": "image", "mimeType": "image/png", "uri": uri}

    try:
        async with running(build_engine_app(engine), initialize=False) as peer:
            init = await peer.request("init", "initialize", {"protocolVersion": 1})
            call = Calls(peer)
            added = await call.result(
                "index/add", {"documents": [{"id": "s", "content": [image(prefix + "page.png")]}]}
            )
            found = await call.result("retrieve", {"query": "supersonic transition", "k": 1})
            refused = {
                name: await call.error(
                    "index/add", {"documents": [{"id": name, "content": [image(uri)]}]}
                )
                for name, uri in {
                    "outside": (other / "page.png").as_uri(),
                    "climbs": prefix + "../other/page.png",
                    "symlink": prefix + "escape.png",
                    "missing": prefix + "absent.png",
                }.items()
            }
    finally:
        engine.close()
    assert init["result"]["_meta"]["fetchableUris"] == [prefix]
    assert added["ids"] == ["s"] and found["hits"][0]["chunk"]["docId"] == "s"
    for name, error in refused.items():
        assert (error["code"], error["data"]["field"]) == (-32602, "documents[0].content[0]"), name
    assert "leaves the folders" in refused["symlink"]["message"]
    assert "could not be fetched" in refused["missing"]["message"]


@needs_ocr
async def test_an_http_image_is_fetched_under_an_allowed_prefix_and_no_redirect_followed(
    tmp_path: Path,
) -> None:
    import http.server
    import threading

    page = render(SCAN)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/scans/page.png":
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
            else:  # a redirect out of the allowed prefix
                self.send_response(302)
                self.send_header("Location", "/private/page.png")
                self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/scans/"
    engine = make_engine(tmp_path / "index", fetch_uris=[base])
    try:
        async with serving(engine) as peer:
            call = Calls(peer)
            uri = {"type": "image", "mimeType": "image/png", "uri": base + "page.png"}
            embedded = await call.result("embed", {"inputs": [uri]})
            moved = {**uri, "uri": base + "moved.png"}
            redirected = await call.error("embed", {"inputs": [moved]})
    finally:
        engine.close()
        server.shutdown()
        server.server_close()
    assert len(embedded["vectors"]) == 1
    assert any("OCR text" in note for note in embedded["usage"]["notes"])
    assert (redirected["code"], redirected["data"]["field"]) == (-32602, "inputs[0]")
    assert "HTTP 302" in redirected["message"]


@needs_ocr
async def test_an_image_that_does_not_fit_the_servers_pixel_budget_is_rate_limited(
    engine: Engine,
) -> None:
    from rcpkit.engine.ingest.images import SERVER_PIXELS

    # A deadline a loaded machine cannot miss: the image waits _BUDGET_WAIT (2 s) for room
    # and is then refused as retryable, long before it (300 ms raced the refusal itself).
    query = {"query": block(render(SCAN)), "_meta": {"deadlineMs": 60_000}}
    async with serving(engine) as peer:
        call = Calls(peer)
        with SERVER_PIXELS.hold(SERVER_PIXELS.capacity, wait=0):  # other requests' images
            busy = await call.error("retrieve", query)
        found = await call.result("retrieve", {**query, "_meta": {}})
    assert (busy["code"], busy["data"]["field"]) == (-32011, "query")
    assert busy["data"]["retryAfterMs"] > 0
    assert any("OCR text" in note for note in found["usage"]["notes"])
