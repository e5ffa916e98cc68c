"""End to end: `rcpkit serve --http --workers N`, N processes on one socket under a parent."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
from http_support import rpc

from process_support import read_until, stop
from rcpkit.transport.http.workers import SHARED_ENV

TOKEN = "writer-token"
HASHING = {"RCPKIT_EMBEDDER": "hashing"}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workers")
    corpus = folder / "docs"
    corpus.mkdir()
    for number in range(12):
        (corpus / f"doc{number}.md").write_text(f"# Document {number}\n\nwidget topic{number}\n")
    subprocess.run(
        [sys.executable, "-m", "rcpkit", "index", str(corpus), "--index", str(folder / "idx")],
        check=True,
        capture_output=True,
        env={**os.environ, **HASHING},
        timeout=120,
    )
    return folder / "idx"


class Served:
    """The parent process, its announced URL, and its live worker processes."""

    def __init__(self, index: Path, *options: str, env: dict[str, str] | None = None) -> None:
        command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(index)]
        command += ["--http", "127.0.0.1:0", *options]
        environment = {**os.environ, **HASHING, "RCPKIT_HTTP_TOKENS": TOKEN, **(env or {})}
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment
        )
        match, self.stderr = read_until(
            self.process, b"", rb"serving RCP over HTTP on (\S+)", timeout=60
        )
        self.url = match.group(1).decode()

    def workers(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children()
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        """Every worker and the parent killed (a worker outlives a killed parent)."""
        for worker in self.workers():
            worker.kill()
        stop(self.process)

    def call(
        self, method: str, params: dict[str, object], request_id: int = 1
    ) -> dict[str, object]:
        headers = {"authorization": f"Bearer {TOKEN}"}
        response = httpx.post(
            self.url, json=rpc(request_id, method, params), headers=headers, timeout=30
        )
        answer: dict[str, object] = response.json()
        return answer


@pytest.fixture
def serve(index: Path) -> Iterator[type[Served]]:
    started: list[Served] = []

    class Tracked(Served):
        def __init__(self, *options: str, env: dict[str, str] | None = None) -> None:
            super().__init__(index, *options, env=env)
            started.append(self)

    yield Tracked
    for served in started:
        served.stop()


def _wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        time.sleep(0.05)


def test_two_workers_are_two_processes_that_answer_every_request(serve: type[Served]) -> None:
    served = serve("--workers", "2", "--metrics", "public")
    assert b"(2 worker processes)" in served.stderr
    # Issue 52: the console's address beside the RCP one, said once by the parent.
    console, _ = read_until(served.process, served.stderr, rb"web console on (\S+)\n", 60)
    assert console.group(1).decode() == served.url.removesuffix("/rcp") + "/ui"
    _wait_for(lambda: len(served.workers()) == 2)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        answers = list(
            pool.map(lambda n: served.call("retrieve", {"query": "widget", "k": 3}, n), range(64))
        )
    assert all(len(answer["result"]["hits"]) == 3 for answer in answers)  # type: ignore[index]
    # /metrics sums the workers' counters, whichever worker answers the scrape.
    metrics_url = served.url.removesuffix("/rcp") + "/metrics"
    auth = {"authorization": f"Bearer {TOKEN}"}
    metrics = httpx.get(metrics_url, headers=auth, timeout=10).text
    counted = [line for line in metrics.splitlines() if line.startswith("rcp_requests_total")]
    assert any('method="retrieve"' in line and line.endswith(" 64.0") for line in counted), counted


def test_keep_alive_connections_spread_over_the_workers(serve: type[Served]) -> None:
    """Issue 31: on one shared socket the first worker to wake took every connection."""
    served = serve("--workers", "2")
    _wait_for(lambda: len(served.workers()) == 2)
    headers = {"authorization": f"Bearer {TOKEN}"}
    clients = [httpx.Client(headers=headers, timeout=30) for _ in range(24)]
    try:
        with concurrent.futures.ThreadPoolExecutor(24) as pool:  # a burst, as a pool opens
            list(
                pool.map(lambda n: clients[n].post(served.url, json=rpc(n, "ping", {})), range(24))
            )
        held = [
            sum(1 for c in worker.net_connections("tcp") if c.status == psutil.CONN_ESTABLISHED)
            for worker in served.workers()
        ]
    finally:
        for client in clients:
            client.close()
    assert sum(held) == 24 and min(held) >= 1, held  # all on one: 2 x 2^-24 by chance
    # Each worker accepts on a socket of its own (SO_REUSEPORT), all on one port: on one
    # shared socket the first worker to wake took every pending connection, so under
    # load one worker could hold them all (BENCHMARKS.md, "HTTP worker processes").
    listening = [
        (c.laddr.port, os.readlink(f"/proc/{worker.pid}/fd/{c.fd}"))
        for worker in served.workers()
        for c in worker.net_connections("tcp")
        if c.status == psutil.CONN_LISTEN and c.fd != -1
    ]
    assert len({port for port, _ in listening}) == 1
    assert len({socket for _, socket in listening}) == 2, listening


def test_a_worker_that_dies_is_replaced_and_the_others_go_on_answering(
    serve: type[Served],
) -> None:
    served = serve("--workers", "2")
    _wait_for(lambda: len(served.workers()) == 2)
    victim = served.workers()[0]
    victim.kill()
    _wait_for(
        lambda: victim.pid not in {w.pid for w in served.workers()} and len(served.workers()) == 2
    )
    for number in range(8):
        answer = served.call("retrieve", {"query": "widget", "k": 1}, number)
        assert "result" in answer, answer


def test_sigterm_drains_every_worker_and_the_parent_exits_zero(serve: type[Served]) -> None:
    served = serve("--workers", "2")
    _wait_for(lambda: len(served.workers()) == 2)
    workers = served.workers()
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(60) == 0
    assert not any(worker.is_running() and worker.status() != "zombie" for worker in workers)


def test_writes_from_either_worker_land_once_and_every_worker_sees_them(
    serve: type[Served],
) -> None:
    served = serve("--workers", "2")
    _wait_for(lambda: len(served.workers()) == 2)

    def add(number: int) -> dict[str, object]:
        document = {"id": f"new{number}", "text": f"gizmo{number} appears once"}
        return served.call("index/add", {"documents": [document]}, number)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(add, range(16)))
    versions = [answer["result"]["indexVersion"] for answer in answers]  # type: ignore[index]
    assert len(set(versions)) == 16, versions  # each write its own version, none reused
    # Whichever worker answers (new connections spread over both), every write shows.
    for attempt in range(12):
        hits = served.call("retrieve", {"query": "gizmo7", "k": 1, "mode": "sparse"}, attempt)
        assert hits["result"]["hits"][0]["id"].startswith("new7"), hits  # type: ignore[index]


def test_a_first_worker_that_cannot_start_ends_the_parent_with_its_error(
    tmp_path: Path,
) -> None:
    command = [sys.executable, "-m", "rcpkit", "serve", "--index", str(tmp_path / "none")]
    command += ["--http", "127.0.0.1:0", "--workers", "2"]
    done = subprocess.run(command, capture_output=True, timeout=60, env={**os.environ, **HASHING})
    assert done.returncode == 2
    assert b"none" in done.stderr  # the worker's own message names the missing index


def test_the_default_is_one_worker_per_core_and_the_keyword_engine_keeps_one(
    serve: type[Served],
) -> None:
    cores = len(os.sched_getaffinity(0))
    env = {"RCPKIT_HTTP_WORKERS": ""}
    served = serve(env=env)
    if cores > 1:
        assert f"({cores} worker processes)".encode() in served.stderr
    command = [sys.executable, "-m", "rcpkit", "serve", "--engine", "keyword"]
    command += ["--http", "127.0.0.1:0", "--workers", "2"]
    done = subprocess.run(command, capture_output=True, timeout=60)
    assert done.returncode == 2 and b"--workers 1" in done.stderr


def test_stateful_sessions_stick_to_the_worker_that_opened_them(serve: type[Served]) -> None:
    served = serve("--workers", "2", "--stateful")
    assert b"sessions routed to their worker" in served.stderr
    _wait_for(lambda: len(served.workers()) == 2)
    auth = {"authorization": f"Bearer {TOKEN}"}
    tokens = []
    for number in range(4):  # round-robin: sessions open on both workers
        params = {"protocolVersion": 1, "client": {"name": f"c{number}", "version": "1"}}
        answer = httpx.post(served.url, json=rpc(number, "initialize", params), headers=auth)
        tokens.append(answer.json()["result"]["_meta"]["session"])
    assert {token.partition(".")[0] for token in tokens} == {"0", "1"}
    # Every request of a session, each on a new connection, reaches its session's worker.
    for number in range(24):
        token = tokens[number % len(tokens)]
        with httpx.Client(headers={**auth, "rcp-session": token}, timeout=30) as fresh:
            answer = fresh.post(served.url, json=rpc(100 + number, "retrieve", {"query": "widget"}))
        assert "result" in answer.json(), answer.text
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(60) == 0


@pytest.fixture(scope="module")
def large_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of own vectors past the row count from which workers share the matrix."""
    import numpy as np

    import rcpkit
    from rcpkit.engine.index._shared_vectors import SHARED_MIN_ROWS

    folder = tmp_path_factory.mktemp("large") / "idx"
    rng = np.random.default_rng(3)
    with rcpkit.open(folder, create=True, vectors=16) as index:
        for start in range(0, SHARED_MIN_ROWS + 500, 5_000):
            count = min(5_000, SHARED_MIN_ROWS + 500 - start)
            documents = [
                {"id": f"d{n}", "text": f"widget w{n % 97}"} for n in range(start, start + count)
            ]
            index.add(documents, vectors=rng.normal(size=(count, 16)))
    return folder


def _shared_vectors_mapped(worker: psutil.Process) -> set[tuple[str, str]]:
    """(path, inode) of the shared vector files ``worker`` maps (/proc/PID/maps)."""
    mapped = set()
    for line in Path(f"/proc/{worker.pid}/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and "/rcpkit-workers-" in fields[5] and fields[5].endswith(".f32"):
            mapped.add((fields[5], fields[4]))
    return mapped


def test_workers_map_one_copy_of_the_vectors_in_ram_removed_when_the_server_stops(
    large_index: Path,
) -> None:
    # Issue 31 item 1: the second worker costs far less memory than the first. Since
    # issue 51 index.mirror holds no vectors: the workers share them in a RAM folder.
    served = Served(large_index, "--workers", "2")
    try:
        _wait_for(lambda: len(served.workers()) == 2)
        workers = served.workers()
        _wait_for(lambda: all(_shared_vectors_mapped(w) for w in workers), timeout=180)
        (first,), (second,) = (_shared_vectors_mapped(w) for w in workers)
        assert first == second  # one file, the same inode, mapped by both
        folder = Path(first[0]).parent
        assert folder.parent == Path("/dev/shm") and folder.is_dir()
        assert "result" in served.call("retrieve", {"query": "widget w5", "k": 3, "mode": "sparse"})
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(60) == 0
        assert not folder.exists()
    finally:
        served.stop()


def test_a_killed_parents_folder_is_removed_by_the_next_parent(large_index: Path) -> None:
    served = Served(large_index, "--workers", "2")
    try:
        _wait_for(lambda: len(served.workers()) == 2)
        workers = served.workers()
        _wait_for(lambda: bool(_shared_vectors_mapped(workers[0])), timeout=180)
        ((path, _inode),) = _shared_vectors_mapped(workers[0])
        served.process.kill()  # no cleanup: its folder stays behind
        served.process.wait(60)
        for worker in workers:
            worker.kill()
            worker.wait(60)
        assert Path(path).parent.is_dir()
    finally:
        stop(served.process)
    later = Served(large_index, "--workers", "2")
    try:
        assert not Path(path).parent.exists()  # swept before the new parent started a worker
    finally:
        later.stop()


def test_one_process_shares_nothing_in_ram(large_index: Path) -> None:
    served = Served(large_index, "--workers", "1")
    try:
        assert "result" in served.call("retrieve", {"query": "widget w5", "k": 3, "mode": "sparse"})
        assert served.workers() == []  # the server itself answers
        assert not _shared_vectors_mapped(psutil.Process(served.process.pid))
        assert SHARED_ENV not in psutil.Process(served.process.pid).environ()
    finally:
        stop(served.process)
