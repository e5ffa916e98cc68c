"""End to end: `rcpkit serve --http` as a real process; the reference client; graceful drain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from http_support import rpc

from process_support import read_until, stop

HERE = Path(__file__).parent
KEYWORD_SERVER = (sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0")
KEYWORD_SERVER += ("--engine", "keyword")


class Spawned:
    """A child that announces its URL on stderr; every read of that pipe is bounded."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._buffer = b""
        self.url = self.wait_for_line(rb"serving RCP over HTTP on (\S+)").decode()
        self.stderr_so_far = self._seen

    def wait_for_line(self, pattern: bytes, timeout: float = 15.0) -> bytes:
        match, buffer = read_until(self.process, self._buffer, pattern, timeout)
        self._seen = buffer[: match.end()]
        self._buffer = buffer[match.end() :]
        return match.group(1) if match.groups() else match.group(0)

    def stop(self) -> None:
        stop(self.process)


@pytest.fixture
def spawn() -> Iterator[Any]:
    children: list[Spawned] = []

    def start(*command: str) -> Spawned:
        child = Spawned(list(command))
        children.append(child)
        return child

    yield start
    for child in children:
        child.stop()


def test_the_reference_client_completes_a_session_against_rcpkit_serve_http(spawn: Any) -> None:
    rcp = pytest.importorskip("rcp")
    server = spawn(*KEYWORD_SERVER, "--allow-unauthenticated-writes")
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/rcp")
    client = rcp.connect_http(server.url)
    try:
        assert client.protocol_version == 1
        assert client.server["name"] == "rcpkit-keyword"
        assert client.supports(rcp.Capability.Retrieve)
        assert client.ping(nonce=5) == {"nonce": 5}
        client.call("index/add", {"documents": [{"id": "d1", "text": "learned sparse SPLADE"}]})
        assert client.search("SPLADE", k=2)["hits"][0]["id"] == "d1"
        with pytest.raises(rcp.RcpError) as caught:
            client.call("embed", {"inputs": ["x"]})
        assert "-32003" in str(caught.value)
    finally:
        client.shutdown()
    # A remote shutdown ends nothing but that caller's session: the server goes on.
    assert httpx.post(f"{server.url}/ping", json=rpc(1, "ping"), timeout=30).status_code == 200


def test_serve_http_without_auth_is_read_only_and_says_so(spawn: Any) -> None:
    server = spawn(*KEYWORD_SERVER)
    assert b"serving read-only over HTTP" in server.stderr_so_far
    info = httpx.post(f"{server.url}/info", json=rpc(1, "info"), timeout=30).json()["result"]
    assert info["capabilities"]["index"]["writable"] is False  # no write is advertised
    for id, (method, params) in enumerate(
        [
            ("index/add", {"documents": [{"id": "x", "text": "probe"}]}),
            ("index/delete", {"ids": ["a"]}),
        ]
    ):
        refused = httpx.post(f"{server.url}/{method}", json=rpc(id, method, params), timeout=30)
        assert refused.status_code == 403, method
        assert refused.json()["error"]["code"] == -32012
    search = rpc(9, "retrieve", {"query": "probe"})
    hits = httpx.post(f"{server.url}/retrieve", json=search, timeout=30).json()["result"]["hits"]
    assert hits == []  # nothing was written


def test_sigterm_drains_in_flight_requests_then_exits_zero(spawn: Any) -> None:
    server = spawn(sys.executable, str(HERE / "http_slow_server.py"), "0.5")
    answers: list[httpx.Response] = []

    def in_flight() -> None:
        body = rpc(1, "retrieve", {"query": "drained"})
        answers.append(httpx.post(f"{server.url}/retrieve", json=body, timeout=10))

    worker = threading.Thread(target=in_flight)
    worker.start()
    server.wait_for_line(rb"handler started")
    server.process.send_signal(signal.SIGTERM)
    worker.join(10)
    assert answers and answers[0].status_code == 200
    assert answers[0].json()["result"]["hits"][0]["id"] == "drained"
    assert server.process.wait(10) == 0
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{server.url}/ping", json=rpc(2, "ping"), timeout=30)


def test_the_command_refuses_tenant_tokens_for_an_engine_that_ignores_tenants() -> None:
    environment = {**os.environ, "RCPKIT_HTTP_TOKENS": "secret@acme"}
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "0", "--engine", "keyword"]
    finished = subprocess.run(command, env=environment, capture_output=True, timeout=30)
    assert finished.returncode == 2
    assert b"honours ctx.tenant" in finished.stderr
