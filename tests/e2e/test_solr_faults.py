"""A Solr node killed under load (issue 48, item 4), through `rcpkit serve --http`.

A cluster of its own (three nodes, one JVM each): ``durable`` has 2 shards with
2 replicas each, ``fragile`` 3 shards with 1 replica each. One node is killed
with SIGKILL while a client writes (``index/add``, one document a request, an
idempotency key each, retried as a client retries a retryable error) and reads.

* ``durable``: every request is answered (a retryable ``-32010`` at most, while
  the cluster fails over), never ``-32603``; every acknowledged document is
  there afterwards, once; the node restarts and rejoins.
* ``fragile``: a retrieve while a shard has no live replica is answered from the
  others and names the dead shard in ``_meta.degraded`` (and ``records`` when
  that shard held the store's version counters); never ``-32603``.

Bounded in requests; the waits are for events (a node's death seen by the
cluster, the writes that follow it), each with a generous bound.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from process_support import read_until, stop
from rcpkit.engine.store.solr.localcloud import Cluster, create_collection, start_cluster

pytestmark = pytest.mark.timeout(1500)

_AFTER_KILL = 10  # acknowledged writes wanted once the node is dead
_MAX_REQUESTS = 2000  # a bound on the whole loop
_BOUND = 600.0  # seconds: only a bound, never an expectation


class Server:
    """``rcpkit serve --http`` on one collection; answers are returned whole (errors too)."""

    def __init__(self, store: str, index: Path) -> None:
        command = [
            sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0",
            "--store", store, "--index", str(index), "--embedder", "hashing:64",
            "--allow-unauthenticated-writes", "--create",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        match, _ = read_until(self.process, b"", rb"serving RCP over HTTP on (\S+)", 300)
        self.url = match.group(1).decode()
        self._ids = itertools.count(1)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        reply: dict[str, Any] = httpx.post(f"{self.url}/{method}", json=body, timeout=300).json()
        return reply


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("faults")
    try:
        cluster = start_cluster(folder / "cloud", nodes=3, shards=2, replicas=2,
                                collection="durable")  # fmt: skip
    except RuntimeError as error:
        pytest.fail(f"a local SolrCloud could not start: {error}")
    try:
        create_collection(cluster.http(), "fragile", shards=3, replicas=1)
        yield cluster
    finally:
        cluster.stop()


def _answered(reply: dict[str, Any]) -> bool:
    """A result, or a retryable error; anything else fails the test (-32603 above all)."""
    if "result" in reply:
        return True
    error = reply["error"]
    assert error["code"] != -32603, reply
    assert error["code"] == -32010 and error.get("data", {}).get("retryable"), reply
    return False


def _live_nodes(cluster: Cluster) -> int:
    return len(cluster.http().admin("CLUSTERSTATUS")["cluster"]["live_nodes"])


def test_a_killed_node_loses_no_acknowledged_write_and_rejoins(
    cloud: Cluster, tmp_path: Path
) -> None:
    server = Server(cloud.collection_url("durable"), tmp_path / "durable")
    acknowledged: list[str] = []
    killed_at: int | None = None
    started = time.monotonic()
    try:
        for n in range(_MAX_REQUESTS):
            doc_id = f"doc-{len(acknowledged)}"
            params = {"documents": [{"id": doc_id, "text": f"note {doc_id} about wings"}],
                      "_meta": {"idempotencyKey": doc_id}}  # fmt: skip
            if _answered(server.call("index/add", params)):
                acknowledged.append(doc_id)
            _answered(server.call("retrieve", {"query": "wings", "k": 3}))
            if killed_at is None and len(acknowledged) == 5:
                cloud.kill_node(1)  # node2: it hosts replicas of both shards
                killed_at = len(acknowledged)
            if killed_at is not None and len(acknowledged) >= killed_at + _AFTER_KILL:
                break
            assert time.monotonic() - started < _BOUND, f"{n} requests, {acknowledged}"
        assert killed_at is not None and len(acknowledged) >= killed_at + _AFTER_KILL
        for doc_id in acknowledged:  # each one there, once
            found = server.call("retrieve", {"query": doc_id, "k": 5, "mode": "sparse"})
            ids = [hit["id"] for hit in found["result"]["hits"]]
            assert ids[0] == f"{doc_id}#0" and ids.count(ids[0]) == 1, (doc_id, ids)
        stats = server.call("x-rcpkit/stats", {})["result"]
        assert stats["documents"] == len(acknowledged), stats
    finally:
        stop(server.process)
        if killed_at is not None:  # the next test needs every node back, pass or fail
            cloud.restart_node(1)
    assert _live_nodes(cloud) == 3


def test_a_dead_shard_is_named_in_degraded_never_an_internal_error(
    cloud: Cluster, tmp_path: Path
) -> None:
    server = Server(cloud.collection_url("fragile"), tmp_path / "fragile")
    try:
        documents = [{"id": f"f{n}", "text": f"fragile note {n} on wings"} for n in range(30)]
        assert "result" in server.call("index/add", {"documents": documents})
        whole = server.call("retrieve", {"query": "wings", "k": 30, "mode": "sparse"})
        assert len(whole["result"]["hits"]) == 30
        assert not whole["result"].get("_meta", {}).get("degraded")

        cloud.kill_node(2)  # node3 holds one of the three shards alone
        deadline = time.monotonic() + _BOUND
        degraded = None
        while degraded is None:  # until the cluster has seen the node die
            reply = server.call("retrieve", {"query": "wings", "k": 30, "mode": "sparse"})
            if _answered(reply):
                degraded = reply["result"].get("_meta", {}).get("degraded")
                if degraded is None:
                    assert len(reply["result"]["hits"]) == 30  # the node is not yet seen dead
            assert time.monotonic() < deadline
        # The dead shard by name; "records" too when it held the store's own records
        # (the version read is then the last one this server saw).
        parts = [part["shard"] for part in degraded]
        shards = [part for part in parts if part != "records"]
        assert len(shards) == 1 and shards[0].startswith("shard"), degraded
        hits = reply["result"]["hits"]
        assert 0 < len(hits) < 30  # the other shards' documents
    finally:
        stop(server.process)
        cloud.restart_node(2)
