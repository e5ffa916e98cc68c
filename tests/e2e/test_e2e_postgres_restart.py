"""A PostgreSQL restart under load costs at most the requests in flight, and none after."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from engine_support import Calls, make_engine, serving
from pg_support import own_server

_IN_FLIGHT = 4  # concurrent requests kept outstanding by the load


async def test_a_restart_under_load_fails_only_requests_in_flight(tmp_path: Path) -> None:
    server = own_server()  # its own: a restart must not cut the session's other tests off
    try:
        engine = make_engine(tmp_path / "local", store=server.url())
        async with serving(engine) as peer:
            await Calls(peer).result(
                "index/add",
                {"documents": [{"id": f"d{i}", "text": f"lamp {i}"} for i in range(20)]},
            )
            restarted = threading.Event()
            restart = threading.Thread(target=lambda: (server.restart(), restarted.set()))
            outcomes = await _load(peer, restart, restarted)
        engine.close()
    finally:
        server.stop()
    before = [reply for sent_after, reply in outcomes if not sent_after]
    after = [reply for sent_after, reply in outcomes if sent_after]
    failed = [reply["error"] for reply in before if "error" in reply]
    assert len(failed) <= _IN_FLIGHT
    assert {error["code"] for error in failed} <= {-32010}
    assert len(after) >= 20
    assert all("result" in reply for reply in after)


async def _load(
    peer: Any, restart: threading.Thread, restarted: threading.Event
) -> list[tuple[bool, dict[str, Any]]]:
    """Keep ``_IN_FLIGHT`` retrieves and writes outstanding; restart after 20 replies."""
    sent: dict[int, bool] = {}  # request id -> sent once the restart had finished
    outcomes: list[tuple[bool, dict[str, Any]]] = []
    ids = iter(range(1000, 100_000))

    def send() -> None:
        request_id = next(ids)
        sent[request_id] = restarted.is_set()
        if request_id % 5 == 0:
            method, params = "index/add", {"documents": [{"id": "w", "text": f"w {request_id}"}]}
        else:
            method, params = "retrieve", {"query": "lamp", "k": 3, "mode": "sparse"}
        peer.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    for _ in range(_IN_FLIGHT):
        send()
    deadline = time.monotonic() + 120
    after = 0
    while after < 20:
        assert time.monotonic() < deadline
        message: dict[str, Any] = await peer.recv(timeout=60)
        if message.get("id") not in sent:
            continue  # a progress frame
        sent_after = sent.pop(message["id"])
        outcomes.append((sent_after, message))
        after += sent_after
        if len(outcomes) == 20:
            restart.start()
        send()
    while sent:  # drain the last ones (answered or not, they were sent after the restart)
        message = await peer.recv(timeout=60)
        sent.pop(message.get("id"), None)
    await asyncio.to_thread(restart.join, 60)
    return outcomes
