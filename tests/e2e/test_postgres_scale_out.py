"""Scale-out end to end: two `rcpkit serve --http` processes on one PostgreSQL database."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from process_support import read_until, stop


class Server:
    """A spawned HTTP server on the shared store; every read of its stderr is bounded."""

    def __init__(self, store: str, index: Path, *extra: str) -> None:
        command = [
            sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0",
            "--store", store, "--index", str(index), "--embedder", "hashing:64",
            "--allow-unauthenticated-writes",  # the test writes through both servers, loopback only
            *extra,
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.url = self._announced(rb"serving RCP over HTTP on (\S+)").decode()
        self._ids = iter(range(1, 1_000_000))
        self._lock = threading.Lock()

    def _announced(self, pattern: bytes, timeout: float = 30.0) -> bytes:
        match, _ = read_until(self.process, b"", pattern, timeout)
        return match.group(1)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            request_id = next(self._ids)
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        reply = httpx.post(f"{self.url}/{method}", json=body, timeout=30).json()
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def stop(self) -> None:
        stop(self.process)


@pytest.fixture
def servers(postgres_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    migrate = [sys.executable, "-m", "rcpkit", "db", "migrate", "--store", postgres_url]
    subprocess.run(migrate, check=True, capture_output=True, timeout=60)
    started: list[Server] = []
    try:
        started.append(Server(postgres_url, tmp_path / "a"))
        started.append(Server(postgres_url, tmp_path / "b"))
        yield started[0], started[1]
    finally:
        for server in started:
            server.stop()


def documents(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"documents": [{"id": doc_id, "text": text} for doc_id, text in pairs]}


def test_a_write_through_one_server_is_read_through_the_other(
    servers: tuple[Server, Server],
) -> None:
    one, other = servers
    added = one.call("index/add", documents(("fox", "the quick brown fox jumps")))
    found = other.call("retrieve", {"query": "brown fox", "k": 3})
    assert [hit["id"] for hit in found["hits"]] == ["fox#0"]
    assert found["indexVersion"] == added["indexVersion"]
    for mode in ("dense", "sparse"):
        hits = other.call("retrieve", {"query": "brown fox", "k": 3, "mode": mode})["hits"]
        assert [hit["id"] for hit in hits] == ["fox#0"], mode


def test_a_version_pinned_on_one_server_is_served_by_the_other_after_more_writes(
    servers: tuple[Server, Server],
) -> None:
    # §7.7.1: the snapshot a result names stays servable by any process.
    one, other = servers
    one.call("index/add", documents(("doc", "an ancient lighthouse keeper")))
    pinned = one.call("retrieve", {"query": "lighthouse", "k": 3})
    one.call("index/add", documents(("doc", "a modern container terminal")))
    other.call("index/add", documents(("more", "lighthouse tours every sunday")))
    again = other.call(
        "retrieve", {"query": "lighthouse", "k": 3, "indexVersion": pinned["indexVersion"]}
    )
    assert again["indexVersion"] == pinned["indexVersion"]
    assert [(h["id"], h["text"]) for h in again["hits"]] == [
        (h["id"], h["text"]) for h in pinned["hits"]
    ]
    latest = other.call("retrieve", {"query": "lighthouse", "k": 3, "mode": "sparse"})
    assert [hit["id"] for hit in latest["hits"]] == ["more#0"]


def test_a_cursor_issued_by_one_server_is_accepted_by_the_other(
    servers: tuple[Server, Server],
) -> None:
    # §10: the cursor secret lives in the shared store, so any server verifies it.
    one, other = servers
    one.call("index/add", documents(*[(f"p{i}", f"paging through result {i}") for i in range(6)]))
    first = one.call("retrieve", {"query": "paging result", "k": 2})
    assert first["nextCursor"]
    second = other.call(
        "retrieve", {"query": "paging result", "k": 2, "cursor": first["nextCursor"]}
    )
    seen = [hit["id"] for hit in first["hits"]]
    assert len(second["hits"]) == 2
    assert not {hit["id"] for hit in second["hits"]} & set(seen)
    assert second["indexVersion"] == first["indexVersion"]


def test_concurrent_upserts_of_the_same_ids_through_both_servers_leave_one_live_copy(
    servers: tuple[Server, Server], postgres_url: str
) -> None:
    one, other = servers
    ids = [f"same{i}" for i in range(5)]
    versions: list[int] = []
    failures: list[BaseException] = []

    def write(server: Server, rounds: int) -> None:
        try:
            for round_ in range(rounds):
                batch = documents(*[(doc_id, f"{doc_id} round {round_}") for doc_id in ids])
                versions.append(int(server.call("index/add", batch)["indexVersion"]))
        except BaseException as error:
            failures.append(error)

    threads = [
        threading.Thread(target=write, args=(server, 6)) for server in (one, other, one, other)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures
    assert len(versions) == 24
    assert len(set(versions)) == 24  # every commit got its own, strictly newer version
    with psycopg.connect(postgres_url) as connection:
        live = connection.execute(
            "SELECT doc_id, count(*) FROM documents WHERE removed IS NULL GROUP BY doc_id"
        ).fetchall()
        chunks = connection.execute(
            "SELECT doc_id, count(*) FROM chunks WHERE removed IS NULL GROUP BY doc_id"
        ).fetchall()
    assert sorted(live) == [(doc_id, 1) for doc_id in ids]
    assert sorted(chunks) == [(doc_id, 1) for doc_id in ids]
    hits = one.call("retrieve", {"query": "round", "k": 20, "mode": "sparse"})["hits"]
    assert sorted(hit["id"] for hit in hits) == [f"{doc_id}#0" for doc_id in ids]


def test_two_servers_answer_graph_calls_from_one_graph(postgres_url: str, tmp_path: Path) -> None:
    """Issue 20: GraphRAG graphs live in the database, not under each server's --index."""
    migrate = [sys.executable, "-m", "rcpkit", "db", "migrate", "--store", postgres_url]
    subprocess.run(migrate, check=True, capture_output=True, timeout=60)
    started: list[Server] = []
    try:
        started.append(Server(postgres_url, tmp_path / "a", "--graph", "regex"))
        started.append(Server(postgres_url, tmp_path / "b", "--graph", "regex"))
        one, other = started
        one.call("index/add", {**documents(
            ("polar-2", "Olav Bjaaland grew up in Morgedal. He made the expedition skis."),
            ("polar-3", "Morgedal lies in Telemark, where Sondre Norheim shaped skiing."),
        ), "chunk": False})  # fmt: skip
        near = {"op": "neighbors", "seedIds": ["morgedal"], "hops": 1}
        assert "telemark" in {node["id"] for node in other.call("graph", near)["nodes"]}
        other.call("index/delete", {"ids": ["polar-3"]})
        nodes = {node["id"] for node in one.call("graph", near)["nodes"]}
        assert "olav bjaaland" in nodes and "telemark" not in nodes
        local = {"op": "local", "query": "Olav Bjaaland Morgedal", "k": 3}
        assert one.call("graph", local)["hits"] == other.call("graph", local)["hits"]
    finally:
        for server in started:
            server.stop()
    assert not list(tmp_path.rglob("*.sqlite3*"))  # no graph file under either --index
