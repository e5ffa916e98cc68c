"""Every row of the §5.2 status table, over a real socket."""

from __future__ import annotations

import threading

import httpx
import pytest
from http_apps import Probe, probe_app
from http_support import JSON, Serve, rpc

from rcpkit.server.dispatcher import Dispatcher
from rcpkit.transport.http import Credential, Credentials, HttpConfig, RateLimit


def test_a_successful_call_is_200_with_a_json_body(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    response = client.post(f"{live.url}/ping", json=rpc(1, "ping", {"nonce": "n"}))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {"nonce": "n"}}


def test_a_json_rpc_error_is_still_200(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    unknown = client.post(f"{live.url}/frobnicate", json=rpc(2, "frobnicate"))
    ungated = client.post(f"{live.url}/embed", json=rpc(3, "embed", {"inputs": ["x"]}))
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (200, -32004)
    assert (ungated.status_code, ungated.json()["error"]["code"]) == (200, -32003)


def test_an_unparseable_body_is_200_with_a_parse_error(serve: Serve, client: httpx.Client) -> None:
    # §5.2: a JSON-RPC error response is still a well-formed response, so HTTP 200.
    live = serve(probe_app(Probe()))
    response = client.post(f"{live.url}/ping", content=b'{"jsonrpc": "2.0", "id": 1', headers=JSON)
    assert response.status_code == 200
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error: invalid JSON"},
    }


def test_a_body_that_is_not_a_request_is_200_with_an_invalid_request(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    for body in (b'"hello"', b"[]", b'{"jsonrpc": "2.0"}', b'{"jsonrpc":"2.0","id":1,"result":{}}'):
        response = client.post(live.url, content=body, headers=JSON)
        assert response.status_code == 200, body
        assert response.json()["error"]["code"] == -32600, body


def test_credentials_rejected_are_401_and_a_forbidden_write_is_403(
    serve: Serve, client: httpx.Client
) -> None:
    credentials = Credentials([Credential.of("reader", "r-token", write=False)])
    live = serve(probe_app(Probe()), HttpConfig(credentials=credentials))
    missing = client.post(f"{live.url}/ping", json=rpc(1, "ping"))
    forbidden = client.post(
        f"{live.url}/index/delete",
        json=rpc(2, "index/delete", {"ids": ["a"]}),
        headers={"authorization": "Bearer r-token"},
    )
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"]["code"] == -32012
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == -32012


def test_an_unknown_base_path_is_404(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    for path in ("/", "/other/ping", "/rcpx/ping"):
        assert client.post(live.root + path, json=rpc(1, "ping")).status_code == 404, path


def test_a_notification_is_204_with_no_body(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 9}}
    response = client.post(f"{live.url}/notifications/cancel", json=cancel)
    batch = client.post(live.url, json=[cancel, {"jsonrpc": "2.0", "method": "notifications/x"}])
    assert (response.status_code, response.content) == (204, b"")
    assert (batch.status_code, batch.content) == (204, b"")


def test_shedding_load_at_the_transport_is_429_with_retry_after(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), HttpConfig(rate_limit=RateLimit(rate=0.5, burst=1)))
    assert client.post(f"{live.url}/ping", json=rpc(1, "ping")).status_code == 200
    shed = client.post(f"{live.url}/ping", json=rpc(2, "ping"))
    assert shed.status_code == 429
    assert shed.headers["retry-after"] == "2"
    error = shed.json()["error"]
    assert error["code"] == -32011
    assert 1000 < error["data"]["retryAfterMs"] <= 2000


def test_no_response_produced_is_500_without_internals(
    serve: Serve, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = serve(probe_app(Probe()))

    def broken(self: Dispatcher, *args: object) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(Dispatcher, "submit", broken)
    response = client.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "q"}))
    assert response.status_code == 500
    assert response.json()["error"] == {"code": -32603, "message": "internal error"}
    assert b"secret" not in response.content


def test_a_server_at_capacity_is_503_with_retry_after(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe), HttpConfig(max_inflight=1))
    blocked: list[httpx.Response] = []

    def hold() -> None:
        with httpx.Client(timeout=30.0) as http:
            params = {"query": "block"}
            blocked.append(http.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", params)))

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert probe.gate.entered.wait(5)
        with httpx.Client(timeout=30.0) as http:
            full = http.post(f"{live.url}/ping", json=rpc(2, "ping"))
        assert full.status_code == 503
        assert full.headers["retry-after"] == "1"
        assert full.json()["error"]["code"] == -32010
    finally:
        probe.gate.open()
        holder.join(5)
    assert blocked[0].json()["result"]["hits"][0]["id"] == "block"


def test_a_verb_other_than_post_is_405_and_options_says_what_is_allowed(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    get = client.get(f"{live.url}/ping")
    options = client.options(f"{live.url}/ping")
    assert (get.status_code, get.headers["allow"]) == (405, "OPTIONS, POST")
    assert (options.status_code, options.headers["allow"]) == (204, "OPTIONS, POST")


def test_a_body_that_is_not_declared_json_is_400(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()))
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    plain = client.post(f"{live.url}/ping", content=body, headers={"content-type": "text/plain"})
    assert plain.status_code == 400
    assert "Content-Type" in plain.json()["error"]["message"]
