"""Limits (§15.5): rate and concurrency per caller, body bytes, batch size, deadline."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit

import httpx
from http_apps import Probe, probe_app
from http_support import Clock, Serve, rpc

from rcpkit.transport.http import Credential, Credentials, HttpConfig, RateLimit

TWO_CALLERS = Credentials([Credential.of("a", "token-a"), Credential.of("b", "token-b")])


def as_caller(token: str) -> httpx.Client:
    return httpx.Client(timeout=30.0, headers={"authorization": f"Bearer {token}"})


def test_the_rate_limit_is_per_caller_and_refills(serve: Serve) -> None:
    clock = Clock()
    config = HttpConfig(credentials=TWO_CALLERS, rate_limit=RateLimit(rate=1.0, burst=2))
    live = serve(probe_app(Probe()), config, clock)
    with as_caller("token-a") as alice, as_caller("token-b") as bob:

        def status(http: httpx.Client) -> int:
            return http.post(f"{live.url}/ping", json=rpc(1, "ping")).status_code

        assert [status(alice), status(alice), status(alice)] == [200, 200, 429]
        assert status(bob) == 200  # another caller has its own bucket
        clock.advance(1.0)
        assert [status(alice), status(alice)] == [200, 429]


def test_the_rate_limit_without_auth_is_per_client_address(serve: Serve) -> None:
    live = serve(probe_app(Probe()), HttpConfig(rate_limit=RateLimit(rate=0.1, burst=1)), Clock())
    with httpx.Client(timeout=30.0) as first, httpx.Client(timeout=30.0) as second:
        assert first.post(f"{live.url}/ping", json=rpc(1, "ping")).status_code == 200
        # Same address, another connection: the same caller.
        assert second.post(f"{live.url}/ping", json=rpc(2, "ping")).status_code == 429


def test_concurrency_is_capped_per_caller(serve: Serve) -> None:
    probe = Probe()
    live = serve(probe_app(probe), HttpConfig(credentials=TWO_CALLERS, max_concurrent=1))
    done: list[int] = []

    def hold() -> None:
        with as_caller("token-a") as alice:
            body = rpc(1, "retrieve", {"query": "block"})
            done.append(alice.post(f"{live.url}/retrieve", json=body).status_code)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert probe.gate.entered.wait(5)
        with as_caller("token-a") as alice, as_caller("token-b") as bob:
            busy = alice.post(f"{live.url}/ping", json=rpc(2, "ping"))
            assert busy.status_code == 429
            assert busy.json()["error"]["code"] == -32011
            assert bob.post(f"{live.url}/ping", json=rpc(3, "ping")).status_code == 200
    finally:
        probe.gate.open()
        holder.join(5)
    assert done == [200]


def test_a_declared_oversized_body_is_refused_before_it_is_sent(serve: Serve) -> None:
    live = serve(probe_app(Probe()), HttpConfig(max_body_bytes=1024))
    parts = urlsplit(live.url)
    head = (
        f"POST {parts.path}/ping HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(head)  # and not one byte of the body
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"connection: close" in answer.lower()
    assert b'"code":-32013' in answer


def test_an_undeclared_oversized_body_is_cut_off_at_the_limit(serve: Serve) -> None:
    live = serve(probe_app(Probe()), HttpConfig(max_body_bytes=1024))

    def chunks() -> object:
        yield b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
        for _ in range(64):
            yield b"x" * 1024
        yield b'"}}'

    with httpx.Client(timeout=30.0) as http:
        headers = {"content-type": "application/json"}
        response = http.post(f"{live.url}/ping", content=chunks(), headers=headers)  # type: ignore[arg-type]
    assert response.status_code == 413
    assert response.json()["error"]["code"] == -32013
    with httpx.Client(timeout=30.0) as http:
        assert http.post(f"{live.url}/ping", json=rpc(1, "ping")).status_code == 200


def test_an_oversized_batch_is_refused_whole(serve: Serve, client: httpx.Client) -> None:
    live = serve(probe_app(Probe()), HttpConfig(max_batch=2))
    response = client.post(live.url, json=[rpc(n, "ping") for n in range(3)])
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32602
    assert error["data"]["limit"] == 2


def test_a_request_past_the_deadline_is_answered_timeout(
    serve: Serve, client: httpx.Client
) -> None:
    probe = Probe()
    live = serve(probe_app(probe), HttpConfig(deadline=0.05))
    response = client.post(f"{live.url}/retrieve", json=rpc(1, "retrieve", {"query": "block"}))
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32014


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data
