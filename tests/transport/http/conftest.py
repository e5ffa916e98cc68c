"""HTTP fixtures: the real app on a real uvicorn, on a loopback socket, in a thread.

The socket is bound and listening before the server thread starts, so a
client may connect at once (the connection queues); nothing waits for
readiness. Servers are stopped together at the end of the session, because
uvicorn's own shutdown takes a few ticks and there is no reason to pay that
once per test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from http_support import Clock, LiveServer, Serve

from rcpkit.server.app import App
from rcpkit.transport.http import HttpConfig, Listen
from rcpkit.transport.http.app import build_http_app

_running: list[LiveServer] = []


@pytest.fixture(scope="session", autouse=True)
def _stop_servers_at_the_end() -> Iterator[None]:
    yield
    for server in _running:
        server.stop()
    for server in _running:
        server.thread.join(10)
        assert not server.thread.is_alive(), "a test server did not shut down"


@pytest.fixture
def serve() -> Iterator[Serve]:
    """``serve(app, config=None, clock=None, listen=None)`` → a LiveServer (``.url`` is the
    base URL). Without a config, anonymous callers may write (the tests' probes do)."""
    started: list[LiveServer] = []

    def start(
        app: App | Any,
        config: HttpConfig | None = None,
        clock: Clock | None = None,
        listen: Listen | None = None,
    ) -> LiveServer:
        config = config or HttpConfig(unauthenticated_writes=True)
        if isinstance(app, App):
            options = {"clock": clock} if clock is not None else {}
            app = build_http_app(app.server, config, **options)
        if listen is not None:
            listen = dataclasses.replace(listen, port=0, drain_timeout=2)
        server = LiveServer(app, config.base, listen)
        started.append(server)
        _running.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30.0) as http:
        yield http
