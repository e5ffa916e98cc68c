"""Stateless and stateful HTTP sessions (§5.2, §13), and cancellation over HTTP (§7.14)."""

from __future__ import annotations

import threading
from typing import Any

import httpx
from http_apps import Probe, probe_app
from http_support import EVENTS, Clock, Serve, frames_of, rpc

from rcpkit.transport.http import Credential, Credentials, HttpConfig

STATEFUL = HttpConfig(stateful=True)


def initialize(
    http: httpx.Client, url: str, client: str = "c", capabilities: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    params = {"protocolVersion": 1, "client": {"name": client, "version": "1"}}
    params["capabilities"] = capabilities or {}
    response = http.post(f"{url}/initialize", json=rpc(0, "initialize", params))
    result = response.json()["result"]
    token = result["_meta"]["session"]
    assert response.headers["rcp-session"] == token
    return token, result


def call(http: httpx.Client, url: str, token: str | None, body: dict[str, Any]) -> Any:
    headers = {"rcp-session": token} if token else {}
    return http.post(f"{url}/{body['method']}", json=body, headers=headers).json()


def test_stateless_requests_are_implicitly_initialized_and_initialize_is_idempotent(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()))
    assert call(client, live.url, None, rpc(1, "retrieve", {"query": "q"}))["result"]["hits"]
    first = call(client, live.url, None, rpc(2, "initialize", {"protocolVersion": 1}))
    again = call(client, live.url, None, rpc(3, "initialize", {"protocolVersion": 1}))
    info = call(client, live.url, None, rpc(4, "info"))
    assert first["result"] == again["result"]
    assert "session" not in first["result"]["_meta"]
    assert info["result"]["capabilities"] == first["result"]["capabilities"]
    gated = call(client, live.url, None, rpc(5, "embed", {"inputs": ["x"]}))
    assert gated["error"]["code"] == -32003


def test_a_stateful_initialize_opens_a_session_that_later_requests_carry(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), STATEFUL)
    token, result = initialize(client, live.url)
    assert result["protocolVersion"] == 1 and len(token) >= 32
    assert call(client, live.url, token, rpc(1, "retrieve", {"query": "q"}))["result"]["hits"]
    # Without the session nothing is initialized (§13), but info and ping still answer.
    assert call(client, live.url, None, rpc(2, "retrieve", {"query": "q"}))["error"]["code"] == (
        -32001
    )
    assert "result" in call(client, live.url, None, rpc(3, "info"))
    assert "result" in call(client, live.url, None, rpc(4, "ping"))


def test_two_sessions_have_two_independent_initialize_states(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), STATEFUL)
    chatty, _ = initialize(client, live.url, "chatty", {"log": {}})
    quiet, _ = initialize(client, live.url, "quiet")
    assert chatty != quiet
    # One session re-initializing is refused (§13); the other's state is untouched.
    again = call(client, live.url, chatty, rpc(5, "initialize", {"protocolVersion": 1}))
    assert again["error"]["code"] == -32600
    body = rpc(6, "retrieve", {"query": "progress", "_meta": {"progressToken": "p"}})
    streams = {}
    for name, token in (("chatty", chatty), ("quiet", quiet)):
        headers = {**EVENTS, "rcp-session": token}
        response = client.post(f"{live.url}/retrieve", json=body, headers=headers)
        streams[name] = [frame.get("method") for frame in frames_of(response.content)]
    # Only the session whose client advertised `log` gets notifications/log (§17.1).
    assert "notifications/log" in streams["chatty"]
    assert "notifications/log" not in streams["quiet"]
    assert streams["chatty"][-1] is None and streams["quiet"][-1] is None


def test_an_unknown_session_is_a_clear_not_initialized_error(
    serve: Serve, client: httpx.Client
) -> None:
    live = serve(probe_app(Probe()), STATEFUL)
    reply = call(client, live.url, "no-such-session", rpc(1, "retrieve", {"query": "q"}))
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32001
    assert "unknown or expired session" in reply["error"]["message"]
    # Presenting a stale token with initialize simply opens a new session.
    params = {"protocolVersion": 1}
    fresh = call(client, live.url, "no-such-session", rpc(2, "initialize", params))
    assert fresh["result"]["_meta"]["session"] != "no-such-session"


def test_an_idle_session_expires(serve: Serve, client: httpx.Client) -> None:
    clock = Clock()
    live = serve(probe_app(Probe()), HttpConfig(stateful=True, session_ttl=60), clock)
    token, _ = initialize(client, live.url)
    clock.advance(59)
    assert "result" in call(client, live.url, token, rpc(1, "retrieve", {"query": "q"}))
    clock.advance(59)  # used a minute ago: still alive
    assert "result" in call(client, live.url, token, rpc(2, "retrieve", {"query": "q"}))
    clock.advance(61)
    assert call(client, live.url, token, rpc(3, "ping"))["error"]["code"] == -32001


def test_a_session_belongs_to_the_credential_that_opened_it(serve: Serve) -> None:
    credentials = Credentials([Credential.of("a", "token-a"), Credential.of("b", "token-b")])
    live = serve(probe_app(Probe()), HttpConfig(stateful=True, credentials=credentials))
    with (
        httpx.Client(timeout=30.0, headers={"authorization": "Bearer token-a"}) as alice,
        httpx.Client(timeout=30.0, headers={"authorization": "Bearer token-b"}) as bob,
    ):
        token, _ = initialize(alice, live.url)
        stolen = call(bob, live.url, token, rpc(1, "retrieve", {"query": "q"}))
        assert stolen["error"]["code"] == -32001  # indistinguishable from an unknown token
        assert "result" in call(alice, live.url, token, rpc(2, "retrieve", {"query": "q"}))


def test_a_cancel_posted_with_the_session_cancels_that_sessions_request(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe), STATEFUL)
    with httpx.Client(timeout=30.0) as http:
        mine, _ = initialize(http, live.url)
        other, _ = initialize(http, live.url)
    answers: list[Any] = []

    def blocked() -> None:
        with httpx.Client(timeout=30.0) as http:
            answers.append(call(http, live.url, mine, rpc("r", "retrieve", {"query": "block"})))

    worker = threading.Thread(target=blocked)
    worker.start()
    try:
        assert probe.gate.entered.wait(5)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": "r"}}
        with httpx.Client(timeout=30.0) as http:
            url = f"{live.url}/notifications/cancel"
            # Another session's cancel names the same id, but not this request.
            assert http.post(url, json=cancel, headers={"rcp-session": other}).status_code == 204
            # A round trip later, a wrongly delivered cancel would have landed.
            assert "result" in call(http, live.url, mine, rpc("p", "ping"))
            assert not probe.gate.cancelled.is_set()
            assert http.post(url, json=cancel, headers={"rcp-session": mine}).status_code == 204
        worker.join(5)
    finally:
        probe.gate.open()
        worker.join(5)
    assert probe.gate.cancelled.is_set()
    assert answers == [
        {"jsonrpc": "2.0", "id": "r", "error": {"code": -32006, "message": "cancelled"}}
    ]


def test_shutdown_ends_the_session(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), STATEFUL)
    token, _ = initialize(client, live.url)
    assert call(client, live.url, token, rpc(1, "shutdown"))["result"] == {}
    assert call(client, live.url, token, rpc(2, "ping"))["error"]["code"] == -32001
    # The server itself goes on serving everyone else.
    assert "result" in call(client, live.url, None, rpc(3, "ping"))


def test_the_number_of_sessions_per_caller_is_capped(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), HttpConfig(stateful=True, max_sessions_per_caller=2))
    initialize(client, live.url)
    initialize(client, live.url)
    response = client.post(
        f"{live.url}/initialize", json=rpc(0, "initialize", {"protocolVersion": 1})
    )
    assert response.status_code == 429
    assert response.json()["error"]["code"] == -32011
