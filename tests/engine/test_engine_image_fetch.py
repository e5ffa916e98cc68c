"""Image ``uri``s fetched over HTTP from a real loopback source (§4.8, §15.5; issues 34, 35).

The source is a ``ThreadingHTTPServer`` on 127.0.0.1 that, like many servers,
decodes ``%2F`` and resolves dot segments before it looks a path up: a prefix
check on the raw URI would let ``/ok/..%2fsecret/`` read outside ``/ok/``.
"""

from __future__ import annotations

import http.server
import posixpath
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from engine_support import Calls, make_engine, serving
from image_support import OTHER, SCAN, needs_ocr, render

Route = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextmanager
def source(routes: dict[str, Route]) -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server: its base URL, and the decoded paths it was asked for."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = posixpath.normpath(unquote(self.path))  # what a lenient server does
            asked.append(path)
            routes.get(path, _missing)(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


def _missing(handler: http.server.BaseHTTPRequestHandler) -> None:
    handler.send_response(404)
    handler.end_headers()


def png(body: bytes) -> Route:
    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "image/png")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return send


def image(uri: str) -> dict[str, Any]:
    return {"type": "image", "mimeType": "image/png", "uri": uri}


@needs_ocr
async def test_encoded_separators_and_dots_cannot_leave_the_allowed_prefix(
    tmp_path: Path,
) -> None:
    routes = {"/ok/good.png": png(render(SCAN)), "/secret/good.png": png(render(OTHER))}
    with source(routes) as (base, asked):
        engine = make_engine(tmp_path / "index", fetch_uris=[f"{base}/ok/"])
        try:
            async with serving(engine) as peer:
                call = Calls(peer)
                allowed = await call.result("embed", {"inputs": [image(f"{base}/ok/good.png")]})
                refused = {
                    uri: await call.error("embed", {"inputs": [image(base + uri)]})
                    for uri in (
                        "/ok/..%2fsecret/good.png",
                        "/ok/..%2Fsecret/good.png",
                        "/ok/%2e%2e/secret/good.png",
                        "/ok/.%2e/secret/good.png",
                        "/ok/..%5csecret/good.png",
                        "/ok/%252e%252e%252fsecret/good.png",
                        "/ok/./../secret/good.png",
                        "/okay/../secret/good.png",
                        "/ok",
                    )
                }
        finally:
            engine.close()
    assert len(allowed["vectors"]) == 1
    for uri, error in refused.items():
        assert (error["code"], error["data"]["field"]) == (-32602, "inputs[0]"), uri
    # Only the allowed page was ever asked for: the refusals came before any GET.
    assert asked == ["/ok/good.png"]


def dripping(stop: threading.Event, *, head: bool) -> Route:
    """A source that sends one byte every 0.5 s, in its headers (``head``) or its body."""

    def send(handler: http.server.BaseHTTPRequestHandler) -> None:
        if head:
            trickle = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nX-Slow: " + b"a" * 4096
        else:
            handler.send_response(200)
            handler.send_header("Content-Type", "image/png")
            handler.send_header("Content-Length", str(1 << 20))
            handler.end_headers()
            trickle = b"\x89PNG" + b"\0" * (1 << 20)
        try:
            for byte in trickle:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                if stop.wait(0.5):
                    return
        except OSError:  # the fetch hung up: what a deadline should do
            return

    return send


@needs_ocr
async def test_dripping_fetches_end_at_their_deadline_and_free_the_workers(
    tmp_path: Path,
) -> None:
    stop = threading.Event()
    routes = {
        "/ok/head.png": dripping(stop, head=True),
        "/ok/body.png": dripping(stop, head=False),
    }
    with source(routes) as (base, asked):
        engine = make_engine(tmp_path / "index", fetch_uris=[f"{base}/ok/"])
        try:
            async with serving(engine) as peer:
                # Four slow fetches: as many as the runtime has workers (the default 4).
                for number, name in enumerate(("head", "body", "head", "body")):
                    query = [image(f"{base}/ok/{name}.png")]
                    params = {"query": query, "_meta": {"deadlineMs": 1500}}
                    peer.send(
                        {"jsonrpc": "2.0", "id": number, "method": "retrieve", "params": params}
                    )
                timed_out = [await peer.recv(timeout=30) for _ in range(4)]
                # A text retrieve right after: a worker must be free for it, not after
                # the four GETs have read on past their deadlines. They would read for
                # half an hour (a byte every 0.5 s until `stop`), so an answer within
                # the 30 s bound says so without a clock a loaded machine can push.
                text = {"query": "boundary layer", "k": 1, "_meta": {"deadlineMs": 20000}}
                peer.send({"jsonrpc": "2.0", "id": "text", "method": "retrieve", "params": text})
                answer = await peer.recv(timeout=30)
        finally:
            stop.set()
            engine.close()
    assert sorted(reply["id"] for reply in timed_out) == [0, 1, 2, 3]
    assert all(reply["error"]["code"] == -32014 for reply in timed_out), timed_out
    assert answer["id"] == "text" and "result" in answer, answer
    assert len(asked) == 4
