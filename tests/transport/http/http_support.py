"""Helpers for the HTTP tests: a live uvicorn server in a thread, a hand-driven clock."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from rcpkit.transport.http import Listen
from rcpkit.transport.http.serve import bind_socket, url_of, uvicorn_config

__all__ = ["EVENTS", "JSON", "Clock", "LiveServer", "Serve", "frames_of", "rpc"]

JSON = {"content-type": "application/json"}
EVENTS = {"accept": "text/event-stream"}


def frames_of(body: bytes) -> list[dict[str, Any]]:
    """Split an SSE body strictly: every event is exactly one `data:` line and a blank line."""
    assert body.endswith(b"\n\n")
    events = body[:-2].split(b"\n\n")
    frames = []
    for event in events:
        assert event.startswith(b"data: "), event
        assert b"\n" not in event, "one line per frame"
        frames.append(json.loads(event[len(b"data: ") :]))
    return frames


class LiveServer:
    """One app served on 127.0.0.1:<free port>."""

    def __init__(self, app: Any, base: str, listen: Listen | None = None) -> None:
        listen = listen or Listen(port=0, drain_timeout=2)
        self.sock = bind_socket(listen)
        self.url = url_of(self.sock, base)
        self.root = self.url.removesuffix(base) if base != "/" else self.url
        self.server = uvicorn.Server(uvicorn_config(app, listen))
        self.thread = threading.Thread(target=self._run, name="uvicorn-test", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def stop(self) -> None:
        self.server.should_exit = True


class Clock:
    """A clock the test moves by hand (session expiry, rate refill)."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def rpc(id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}


Serve = Callable[..., LiveServer]
