"""SSE (§5.2, §9): progress frames, then one final frame, each a `data:` line."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
from http_apps import Probe, probe_app
from http_support import EVENTS, Serve, frames_of, rpc


def progress_request(id: Any, query: str = "progress") -> dict[str, Any]:
    return rpc(id, "retrieve", {"query": query, "_meta": {"progressToken": f"t{id}"}})


def test_progress_frames_come_before_exactly_one_final_response(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    response = client.post(f"{live.url}/retrieve", json=progress_request(1), headers=EVENTS)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["cache-control"] == "no-cache"
    frames = frames_of(response.content)
    assert [frame.get("method") for frame in frames] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    first, second, final = frames
    assert first["params"] == {
        "progressToken": "t1",
        "progress": 0.25,
        "stage": "recall",
        "message": "first",
    }
    assert second["params"]["partial"] == {"hits": [{"id": "a", "score": 1.0}]}
    assert final == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"hits": [{"id": "progress", "score": 1.0}]},
    }


def test_frames_arrive_as_they_are_produced_not_at_the_end(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    with (
        httpx.Client(timeout=30.0) as http,
        http.stream(
            "POST", f"{live.url}/retrieve", json=progress_request(2, "stream"), headers=EVENTS
        ) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        chunks = response.iter_bytes()
        received = b""
        while b"\n\n" not in received:  # the handler is still held at the gate
            received += next(chunks)
        assert not probe.gate.cancelled.is_set()
        (first,) = frames_of(received)
        assert first["params"]["message"] == "before the gate"
        probe.gate.open()
        rest = b"".join(chunks)
    assert frames_of(rest)[-1]["result"]["hits"][0]["id"] == "stream"


def test_a_request_without_a_progress_token_streams_only_the_final_frame(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    body = rpc(3, "retrieve", {"query": "progress"})
    response = client.post(f"{live.url}/retrieve", json=body, headers=EVENTS)
    assert [frame["id"] for frame in frames_of(response.content)] == [
        3
    ]  # §9: no token, no progress


def test_without_accept_event_stream_the_answer_is_one_buffered_json(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    response = client.post(f"{live.url}/retrieve", json=progress_request(4))
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["hits"][0]["id"] == "progress"


def test_no_sse_unless_streaming_is_advertised_or_for_runtime_methods(
    serve: Serve, client: httpx.Client
) -> None:
    quiet = serve(probe_app(Probe(), streaming=False))
    response = client.post(f"{quiet.url}/retrieve", json=progress_request(5), headers=EVENTS)
    assert response.headers["content-type"] == "application/json"
    live = serve(probe_app(Probe()))
    ping = client.post(f"{live.url}/ping", json=rpc(6, "ping"), headers=EVENTS)
    assert ping.headers["content-type"] == "application/json"


def test_a_refused_streaming_request_is_still_one_final_frame(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    bad = rpc(7, "retrieve", {"query": "q", "k": -1, "_meta": {"progressToken": 1}})
    response = client.post(f"{live.url}/retrieve", json=bad, headers=EVENTS)
    (final,) = frames_of(response.content)
    assert final["error"]["code"] == -32602


def test_a_client_that_disconnects_mid_stream_cancels_the_handler(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    parts = urlsplit(live.url)
    body = json.dumps(progress_request(8, "block")).encode()
    head = (
        f"POST {parts.path}/retrieve HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head + body)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        assert probe.gate.entered.wait(5)
    assert probe.gate.cancelled.wait(5)


def test_a_buffered_client_that_disconnects_cancels_its_request_too(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    parts = urlsplit(live.url)
    body = json.dumps(rpc(9, "retrieve", {"query": "block"})).encode()
    head = (
        f"POST {parts.path}/retrieve HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head + body)
        assert probe.gate.entered.wait(5)
    assert probe.gate.cancelled.wait(5)
