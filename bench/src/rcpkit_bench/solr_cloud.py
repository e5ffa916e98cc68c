"""What the Solr suites share: a local SolrCloud's state, and an ``rcpkit serve`` over it.

``rcpkit bench solr-faults`` and ``rcpkit bench solr`` start the project's own
local cluster (``rcpkit.engine.store.solr.localcloud``, as ``rcpkit solr up``
does) and a real ``rcpkit serve --http`` in front of a collection. Everything
here waits on the cluster's state (``CLUSTERSTATUS``) with a bound, never on
a clock.
"""

from __future__ import annotations

import http.client
import itertools
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from rcpkit.engine.store.solr.localcloud import Cluster, launcher, start_cluster
from rcpkit_bench.report import BenchUnavailable

__all__ = [
    "Answer",
    "RcpServer",
    "active",
    "local_cluster",
    "node_name",
    "placement",
    "shard_counts",
    "wait_until",
]

POLL = 0.5  # seconds between two looks at the cluster's state (a poll, not a wait for time)

# One answer: the JSON-RPC reply, or None and why none came ("hang" / "crash").
Answer = tuple[dict[str, Any] | None, str]


def local_cluster(folder: Path, nodes: int) -> Cluster:
    """ZooKeeper and ``nodes`` Solr JVMs on 127.0.0.1; BenchUnavailable without Java/Maven."""
    try:
        launcher()
    except RuntimeError as error:
        raise BenchUnavailable(str(error)) from None
    return start_cluster(folder, nodes=nodes, shards=1, replicas=1, collection="rcpkit")


def node_name(cluster: Cluster, position: int) -> str:
    """A node's name in SolrCloud's state (``127.0.0.1:PORT_solr``)."""
    return f"127.0.0.1:{cluster.nodes[position].port}_solr"


def _status(cluster: Cluster) -> dict[str, Any]:
    cloud: dict[str, Any] = cluster.http().admin("CLUSTERSTATUS")["cluster"]
    return cloud


def live_nodes(cluster: Cluster) -> set[str]:
    return set(_status(cluster).get("live_nodes", []))


def placement(cluster: Cluster, collection: str) -> dict[str, list[dict[str, Any]]]:
    """Each shard's replicas as the cluster's state has them (node_name, state, core, …)."""
    shards = _status(cluster)["collections"][collection]["shards"]
    return {name: list(shard["replicas"].values()) for name, shard in shards.items()}


def active(cluster: Cluster, collections: list[str]) -> bool:
    """Every node live and every replica of ``collections`` active (a node has rejoined)."""
    status = _status(cluster)
    if len(status.get("live_nodes", [])) < len(cluster.nodes):
        return False
    return all(
        replica.get("state") == "active"
        for name in collections
        for shard in status["collections"][name]["shards"].values()
        for replica in shard["replicas"].values()
    )


def shard_counts(cluster: Cluster, collection: str, query: str) -> dict[str, list[int]]:
    """Per shard, each replica's own count of ``query`` (``distrib=false``: that core alone)."""
    return {
        shard: [_core_select(str(r["base_url"]), str(r["core"]), query) for r in replicas]
        for shard, replicas in placement(cluster, collection).items()
    }


def _core_select(base_url: str, core: str, query: str) -> int:
    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=120)
    try:
        params = urlencode({"q": query, "rows": 0, "distrib": "false", "wt": "json"})
        path = f"{parts.path}/{core}/select?{params}"
        connection.request("GET", path)
        answer = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    return int(answer["response"]["numFound"])


def wait_until(
    check: Callable[[], bool], bound: float, stop: threading.Event | None = None
) -> bool:
    """Poll ``check`` (a look at the cluster's state) until it holds; False past ``bound``.

    ``bound`` is a limit on a wait for an event, never an expectation of how long
    it takes; a failing look (a node answering nothing yet) counts as not yet.
    """
    deadline = time.monotonic() + bound
    idle = stop or threading.Event()
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except Exception:  # the cluster mid-failover (a node not answering yet): look again
            pass
        idle.wait(POLL)
    return False


class RcpServer:
    """``rcpkit serve --http`` on one store; answers returned whole, errors included."""

    def __init__(
        self, store: str | None, index: Path, embedder: str, startup: float = 300.0
    ) -> None:
        """``store`` None: the embedded store in ``index``."""
        from rcpkit_bench.http import _Child

        command = [
            sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0",
            "--index", str(index), "--embedder", embedder,
            "--allow-unauthenticated-writes", "--create",
        ]  # fmt: skip
        if store is not None:
            command += ["--store", store]
        self.child = _Child.spawn(command, startup=startup)
        parts = urlsplit(self.child.url)
        self._address = (parts.hostname or "", parts.port)
        self._base = parts.path
        self._ids = itertools.count(1)
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []  # every thread's, closed at stop
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        return self.child.process.pid

    def rss_mib(self) -> float:
        return self.child.rss_mib()

    def call(self, method: str, params: dict[str, Any], timeout: float = 180.0) -> Answer:
        """The reply; ``(None, "hang")`` past ``timeout``, ``(None, "crash")`` when none came.

        A kept-alive connection the server closed while it sat idle is opened again
        and the request sent once more, as an HTTP client's pool does (it never
        reached the server).
        """
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                           "params": params})  # fmt: skip
        # Once more only when a kept-alive connection turned out closed.
        tries = 2 if getattr(self._local, "connection", None) is not None else 1
        for attempt in range(1, tries + 1):
            try:
                return self._exchange(method, body, timeout), ""
            except TimeoutError:
                self._drop()
                return None, "hang"
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected) as stale:
                self._drop()
                failure: Exception = stale
                if attempt < tries:
                    continue
            except (OSError, http.client.HTTPException, ValueError) as broken:
                self._drop()
                failure = broken
            return None, f"crash: {type(failure).__name__}: {failure}"
        raise AssertionError("unreachable")

    def _exchange(self, method: str, body: str, timeout: float) -> dict[str, Any]:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(*self._address, timeout=timeout)
            self._local.connection = connection
            with self._lock:
                self._opened.append(connection)
        connection.request("POST", f"{self._base}/{method}", body,
                           {"Content-Type": "application/json"})  # fmt: skip
        reply: dict[str, Any] = json.loads(connection.getresponse().read())
        return reply

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def alive(self) -> bool:
        return self.child.process.poll() is None

    def stop(self) -> None:
        with self._lock:
            for connection in self._opened:
                connection.close()
        self.child.stop()
