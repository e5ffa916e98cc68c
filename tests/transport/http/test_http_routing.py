"""POST <base>/<method>, batches at the base, the compact envelope, keep-alive, concurrency."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

import httpx
from http_apps import Probe, probe_app
from http_support import JSON, Serve, rpc

from rcpkit.engine.keyword import KeywordIndex
from rcpkit.handlers.keyword import build_keyword_app, load_samples
from rcpkit.server.app import App
from rcpkit.transport.http import HttpConfig


def test_a_path_that_names_another_method_is_invalid_request(
    serve: Serve, client: httpx.Client
) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    body = rpc(7, "retrieve", {"query": "q"})
    response = client.post(f"{live.url}/ping", json=body)
    assert response.status_code == 200
    reply = response.json()
    assert reply["id"] == 7
    assert reply["error"]["code"] == -32600
    assert probe.tenants == []  # the handler never ran


def test_a_notification_on_the_wrong_path_is_an_invalid_request_with_200(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 1}}
    response = client.post(f"{live.url}/retrieve", json=cancel)
    assert response.status_code == 200
    assert response.json()["id"] is None
    assert response.json()["error"]["code"] == -32600


def test_a_batch_is_posted_to_the_base_path_and_answered_as_an_array(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    batch = [rpc(1, "ping"), rpc(2, "retrieve", {"query": "q"}), {"jsonrpc": "2.0", "id": 3}]
    response = client.post(live.url, json=batch)
    assert response.status_code == 200
    replies = {reply["id"]: reply for reply in response.json()}
    assert replies[1]["result"] == {}
    assert replies[2]["result"]["hits"][0]["id"] == "q"
    assert replies[3]["error"]["code"] == -32600
    on_method = client.post(f"{live.url}/ping", json=[rpc(1, "ping")])
    assert on_method.status_code == 200  # §5.2: a JSON-RPC error body is HTTP 200
    assert on_method.json()["error"]["code"] == -32600


def test_a_single_request_may_also_go_to_the_base_path(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), HttpConfig(base="/api/rcp"))
    assert live.url.endswith("/api/rcp")
    for url in (live.url, live.url + "/"):
        assert client.post(url, json=rpc(1, "ping")).json()["result"] == {}


def test_the_compact_envelope_is_accepted(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    compact = client.post(
        f"{live.url}/retrieve", json={"method": "retrieve", "params": {"query": "c"}}
    )
    assert compact.status_code == 200
    assert compact.json() == {"result": {"hits": [{"id": "c", "score": 1.0}]}}
    with_id = client.post(f"{live.url}/ping", json={"id": 4, "method": "ping"})
    assert with_id.json() == {"jsonrpc": "2.0", "id": 4, "result": {}}
    failed = client.post(f"{live.url}/embed", json={"method": "embed", "params": {"inputs": ["x"]}})
    assert failed.json()["error"]["code"] == -32003
    assert set(failed.json()) == {"error"}


def test_a_connection_is_kept_alive_across_requests(serve: Serve) -> None:
    live = serve(probe_app(Probe()))
    parts = urlsplit(live.url)
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    request = (
        f"POST {parts.path}/ping HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        for _ in range(3):  # three requests, one connection
            sock.sendall(request)
            head, reply = _read_response(sock)
            assert head.startswith(b"HTTP/1.1 200")
            assert b"connection: close" not in head.lower()
            assert reply == b'{"jsonrpc":"2.0","id":1,"result":{}}'


async def test_a_slow_request_does_not_hold_up_other_requests(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    async with httpx.AsyncClient(timeout=30.0) as http:
        slow = asyncio.create_task(
            http.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "block"}))
        )
        assert await asyncio.to_thread(probe.gate.entered.wait, 5)
        quick = await asyncio.gather(
            *(http.post(f"{live.url}/ping", json=rpc(i, "ping")) for i in range(8))
        )
        assert [response.json()["id"] for response in quick] == list(range(8))
        assert not slow.done()
        probe.gate.open()
        assert (await asyncio.wait_for(slow, 5)).json()["result"]["hits"][0]["id"] == "block"


async def test_two_callers_may_use_the_same_id_at_once(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe))
    async with httpx.AsyncClient(timeout=30.0) as first, httpx.AsyncClient(timeout=30.0) as second:
        blocked = asyncio.create_task(
            first.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "block"}))
        )
        assert await asyncio.to_thread(probe.gate.entered.wait, 5)
        other = await second.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "x"}))
        assert other.json()["result"]["hits"][0]["id"] == "x"  # not "id already in flight"
        probe.gate.open()
        assert "result" in (await asyncio.wait_for(blocked, 5)).json()


def _read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        data += _recv(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += _recv(sock)
    return head, body


def _recv(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    assert chunk, "the server closed the connection"
    return chunk


def test_ping_and_info_answer_the_same_on_the_fast_path_and_the_general_one(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    plain_ping = client.post(f"{live.url}/ping", json=rpc(7, "ping")).json()
    assert plain_ping == {"jsonrpc": "2.0", "id": 7, "result": {}}
    # A float id, a nonce, a stray field, a compact envelope: each takes the general path.
    assert client.post(f"{live.url}/ping", json=rpc(1.5, "ping")).json()["id"] == 1.5
    nonce = client.post(f"{live.url}/ping", json=rpc("n", "ping", {"nonce": "x"})).json()
    assert nonce == {"jsonrpc": "2.0", "id": "n", "result": {"nonce": "x"}}
    bad = client.post(f"{live.url}/ping", json=rpc(2, "ping", {"nonce": [1]})).json()
    assert bad["error"]["code"] == -32602
    info = client.post(f"{live.url}/info", json=rpc(3, "info")).json()
    batch = client.post(live.url, json=[rpc(3, "info")]).json()
    assert info == batch[0]
    assert client.post(f"{live.url}/ping", json=rpc(4, "info")).json()["error"]["code"] == -32600
    extra = {**rpc(5, "ping"), "x-extra": 1}
    assert client.post(f"{live.url}/ping", json=extra).json()["result"] == {}
    assert client.post(f"{live.url}/ping", json={"method": "ping"}).json() == {"result": {}}


def _keyword_app() -> App:
    index = KeywordIndex()
    index.upsert(load_samples())
    return build_keyword_app(index)


def test_a_method_path_takes_the_bare_params_of_its_method(
    serve: Serve, client: httpx.Client
) -> None:
    """Issue 36: ``POST /rcp/retrieve`` with ``{"query": …}``, as curl users write it."""
    live = serve(_keyword_app())
    bare = client.post(f"{live.url}/retrieve", json={"query": "reciprocal rank fusion", "k": 2})
    assert bare.status_code == 200
    answer = bare.json()
    assert set(answer) == {"result"}  # answered compactly: the exchange correlates it
    enveloped = client.post(
        f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "reciprocal rank fusion", "k": 2})
    ).json()
    assert [hit["id"] for hit in answer["result"]["hits"]] == [
        hit["id"] for hit in enveloped["result"]["hits"]
    ]
    assert answer["result"]["hits"][0]["id"] == "hybrid-fusion"
    # A value that happens to say "jsonrpc" is still params, not a broken envelope.
    word = client.post(f"{live.url}/retrieve", json={"query": "jsonrpc", "k": 1}).json()
    assert set(word) == {"result"}
    assert client.post(f"{live.url}/ping", json={}).json() == {"result": {}}


def test_bare_params_are_validated_as_the_paths_method_params(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(_keyword_app())
    missing = client.post(f"{live.url}/retrieve", json={"k": 2})
    assert missing.status_code == 200  # §5.2: a JSON-RPC error is still HTTP 200
    assert missing.json()["error"]["code"] == -32602
    unknown = client.post(f"{live.url}/no/such/method", json={"query": "x"}).json()
    assert unknown["error"]["code"] == -32004  # §12: UnknownMethod
    # §4: not JSON is a parse error; a JSON value that is no params object an invalid request.
    broken = client.post(f"{live.url}/retrieve", content=b'{"query": ', headers=JSON)
    assert broken.status_code == 200
    assert broken.json()["error"]["code"] == -32700
    for value in (b'"query"', b"3", b"null"):
        answer = client.post(f"{live.url}/retrieve", content=value, headers=JSON).json()
        assert answer["error"]["code"] == -32600, value
    # Still the compact envelope when it names its method and params; and still checked.
    compact = client.post(
        f"{live.url}/retrieve", json={"method": "retrieve", "params": {"query": "bm25"}}
    ).json()
    assert compact["result"]["hits"]
    other = client.post(f"{live.url}/retrieve", json={"method": "ping", "params": {}}).json()
    assert other["error"]["code"] == -32600
    # At the base path there is no method to wrap the params in.
    base = client.post(live.url, json={"query": "bm25"}).json()
    assert base["error"]["code"] == -32600


def test_bare_params_with_a_method_field_of_their_own_are_params(
    serve: Serve, client: httpx.Client
) -> None:
    """``retrieve.fusion`` / ``rerank.method``: a ``method`` member alone is not an envelope."""
    live = serve(_keyword_app())
    body = {"query": "bm25", "method": "cross-encoder", "k": 1}
    answer = client.post(f"{live.url}/retrieve", json=body).json()
    # Retrieve params (an unknown member is ignored), not a call of a method "cross-encoder",
    # which the path would have refused as naming another method (-32600).
    assert answer["result"]["hits"][0]["id"] == "bm25"
