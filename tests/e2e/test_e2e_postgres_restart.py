"""A PostgreSQL restart under load costs at most the requests in flight when it began,
the ones sent while the database is down, and none sent after it is back."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine_support import Calls, make_engine, serving
from pg_support import own_server

_IN_FLIGHT = 4  # concurrent requests kept outstanding by the load


async def test_a_restart_under_load_fails_only_requests_in_flight(tmp_path: Path) -> None:
    # Its own: a restart must not cut the session's other tests off. Durable, as a
    # deployed server runs: fault campaigns never run PostgreSQL fsync off (issue 48).
    server = own_server(durable=True)
    try:
        engine = make_engine(tmp_path / "local", store=server.url())
        async with serving(engine) as peer:
            await Calls(peer).result(
                "index/add",
                {"documents": [{"id": f"d{i}", "text": f"lamp {i}"} for i in range(20)]},
            )
            phases = _Phases()
            restart = threading.Thread(target=lambda: phases.run(server.restart))
            outcomes = await _load(peer, restart, phases)
        engine.close()
    finally:
        server.stop()

    def replies(phase: str) -> list[dict[str, Any]]:
        return [reply for sent_in, reply in outcomes if sent_in == phase]

    failed_before = [reply["error"] for reply in replies("before") if "error" in reply]
    failed_during = [reply["error"] for reply in replies("during") if "error" in reply]
    after = replies("after")
    assert len(failed_before) <= _IN_FLIGHT
    # Sent while the database was down: refused as unavailable, never an internal error.
    assert {error["code"] for error in failed_before + failed_during} <= {-32010}
    assert len(after) >= 20
    assert all("result" in reply for reply in after)


class _Phases:
    """Where the restart stands: "before" it began, "during" it, "after" it finished."""

    def __init__(self) -> None:
        self._began = threading.Event()
        self._ended = threading.Event()

    def begin(self) -> None:
        self._began.set()

    def run(self, restart: Callable[[], None]) -> None:
        restart()
        self._ended.set()

    def now(self) -> str:
        if self._ended.is_set():
            return "after"
        return "during" if self._began.is_set() else "before"


async def _load(
    peer: Any, restart: threading.Thread, phases: _Phases
) -> list[tuple[str, dict[str, Any]]]:
    """Keep ``_IN_FLIGHT`` retrieves and writes outstanding; restart after 20 replies."""
    sent: dict[int, str] = {}  # request id -> the restart's phase when it was sent
    outcomes: list[tuple[str, dict[str, Any]]] = []
    ids = iter(range(1000, 100_000))

    def send() -> None:
        request_id = next(ids)
        sent[request_id] = phases.now()
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
        sent_in = sent.pop(message["id"])
        outcomes.append((sent_in, message))
        after += sent_in == "after"
        if len(outcomes) == 20:
            phases.begin()  # before the thread starts: what is sent from here may meet the restart
            restart.start()
        send()
    while sent:  # drain the last ones (answered or not, they were sent after the restart)
        message = await peer.recv(timeout=60)
        sent.pop(message.get("id"), None)
    await asyncio.to_thread(restart.join, 60)
    return outcomes
