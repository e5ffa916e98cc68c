"""Tenants with worker processes: `rcpkit serve --http --workers 2` and tenant tokens (issue 52).

One worker per core is the default, so the documented tenant set-up must hold
with several: the parent refused tenant-scoped tokens ("engine does not honour
ctx.tenant", exit 2). Here each tenant writes through one worker and reads
through the other; what a tenant sees (its documents only, its own versions,
its cursors and pins, its confidence) must not depend on which worker answers.
The engine is the bundled MiniLM model.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest

from process_support import read_until, stop

TOKENS = {"alpha": "alpha-worker-token", "beta": "beta-worker-token", "gamma": "gamma-token"}
_CORPUS = {
    "alpha": [f"alpha ledger invoice {n} quarterly renewal" for n in range(6)],
    "beta": [f"beta ledger shipment {n} quarterly vendor" for n in range(6)],
}


class Worker:
    """A keep-alive connection that one worker process holds (found by its port)."""

    def __init__(self, connection: http.client.HTTPConnection, path: str) -> None:
        self.connection = connection
        self.path = path

    def call(self, tenant: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        headers = {
            "content-type": "application/json",
            "authorization": f"Bearer {TOKENS[tenant]}",
        }
        self.connection.request("POST", self.path, body, headers)
        answer: dict[str, Any] = json.loads(self.connection.getresponse().read())
        return answer

    def result(self, tenant: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.call(tenant, method, params)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result


@pytest.fixture
def served(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--workers", "2", "--index", str(tmp_path / "idx"), "--create"]
    tokens = ",".join(f"{token}@{tenant}" for tenant, token in TOKENS.items())
    environment = {**os.environ, "RCPKIT_HTTP_TOKENS": tokens}
    environment.pop("RCPKIT_EMBEDDER", None)  # the bundled model
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
    )
    try:
        yield process
    finally:
        for worker in _children(process):
            worker.kill()
        stop(process)


def _children(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children()
    except psutil.NoSuchProcess:
        return []


@contextmanager
def _one_connection_per_worker(
    process: subprocess.Popen[bytes], url: str
) -> Iterator[list[Worker]]:
    """Open connections until each of the two workers holds one (the kernel spreads them)."""
    parts = urlsplit(url)
    held: dict[int, Worker] = {}
    spare: list[http.client.HTTPConnection] = []
    try:
        yield _spread(process, parts.hostname or "", parts.port, parts.path, held, spare)
    finally:
        for connection in [*spare, *(worker.connection for worker in held.values())]:
            connection.close()


def _spread(
    process: subprocess.Popen[bytes],
    host: str,
    port: int | None,
    path: str,
    held: dict[int, Worker],
    spare: list[http.client.HTTPConnection],
) -> list[Worker]:
    for _ in range(64):  # both on one worker 64 times: 2 x 2^-64
        connection = http.client.HTTPConnection(host, port, timeout=120)
        spare.append(connection)
        worker = Worker(connection, path)
        worker.result("alpha", "ping", {})  # answered: the worker has accepted it
        assert connection.sock is not None
        owner = _owner(process, connection.sock.getsockname()[1])
        if owner not in held:
            spare.remove(connection)
            held[owner] = worker
        if len(held) == 2:
            break
    assert len(held) == 2, "every connection went to one worker"
    return list(held.values())


def _owner(process: subprocess.Popen[bytes], port: int) -> int:
    """The pid of the worker that holds the connection from our ``port``."""
    for worker in _children(process):
        for connection in worker.net_connections("tcp"):
            if connection.raddr and connection.raddr.port == port:
                return int(worker.pid)
    raise AssertionError(f"no worker holds the connection from port {port}")


def _texts(result: dict[str, Any]) -> list[str]:
    return [str(hit["id"]) for hit in result["hits"]]


def test_tenants_are_isolated_whichever_of_two_workers_answers(
    served: subprocess.Popen[bytes],
) -> None:
    match, stderr = read_until(served, b"", rb"serving RCP over HTTP on (\S+)", timeout=300)
    assert b"(2 worker processes)" in stderr
    with _one_connection_per_worker(served, match.group(1).decode()) as (first, second):
        _check_isolation(first, second)


def _check_isolation(first: Worker, second: Worker) -> None:
    for tenant, worker in (("alpha", first), ("beta", second)):
        documents = [
            {"id": f"{tenant}-{n}", "text": text} for n, text in enumerate(_CORPUS[tenant])
        ]
        written = worker.result(tenant, "index/add", {"documents": documents})
        assert written["indexVersion"] == "1"  # each tenant's own first version
    query = {"query": "quarterly ledger", "k": 2, "mode": "hybrid"}
    for tenant in ("alpha", "beta"):
        seen = [worker.result(tenant, "retrieve", query) for worker in (first, second)]
        for result in seen:  # its documents only, at its own version, on either worker
            assert result["indexVersion"] == "1"
            assert result["hits"] and all(hit["id"].startswith(tenant) for hit in result["hits"])
        assert [(h["id"], h["score"], h.get("confidence")) for h in seen[0]["hits"]] == [
            (h["id"], h["score"], h.get("confidence")) for h in seen[1]["hits"]
        ]
        # A cursor and a pin minted by one worker serve the same on the other.
        cursor = seen[0]["nextCursor"]
        pages = [
            worker.result(tenant, "retrieve", {**query, "cursor": cursor})
            for worker in (first, second)
        ]
        assert _texts(pages[0]) == _texts(pages[1]) and pages[0]["hits"]
        pinned = second.result(tenant, "retrieve", {**query, "indexVersion": "1"})
        assert _texts(pinned) == _texts(seen[0])
    # The other tenant's cursor is no cursor here, on either worker.
    theirs = first.result("alpha", "retrieve", query)["nextCursor"]
    for worker in (first, second):
        refused = worker.call("beta", "retrieve", {**query, "cursor": theirs})
        assert refused["error"]["code"] == -32602, refused
    # A write of alpha moves none of beta's numbers, whichever worker beta asks.
    first.result("alpha", "index/add", {"documents": [{"id": "alpha-late", "text": "ledger"}]})
    for worker in (first, second):
        assert worker.result("beta", "retrieve", query)["indexVersion"] == "1"
        assert worker.result("alpha", "retrieve", query)["indexVersion"] == "2"


def test_confidence_is_the_same_on_a_worker_that_calibrated_later(
    served: subprocess.Popen[bytes],
) -> None:
    match, _ = read_until(served, b"", rb"serving RCP over HTTP on (\S+)", timeout=300)
    query = {"query": "quarterly ledger", "k": 3, "mode": "hybrid"}
    with _one_connection_per_worker(served, match.group(1).decode()) as (first, second):
        texts = _CORPUS["alpha"] + _CORPUS["beta"]
        documents = [{"id": f"gamma-{n}", "text": text} for n, text in enumerate(texts)]
        first.result("gamma", "index/add", {"documents": documents[:6]})
        first.result("gamma", "retrieve", query)  # the first worker calibrates on 6
        first.result("gamma", "index/add", {"documents": documents[6:11]})
        seen = [worker.result("gamma", "retrieve", query) for worker in (first, second)]
        assert [h.get("confidence") for h in seen[0]["hits"]] == [
            h.get("confidence") for h in seen[1]["hits"]
        ]
