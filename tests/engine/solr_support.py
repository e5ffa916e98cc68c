"""One local SolrCloud for the whole test session, a fresh collection per test.

Started on first use (so a run that selects no Solr test never starts it) by the
project's own tooling (``rcpkit.engine.store.solr.localcloud``: the jars from
Maven Central through the shipped pom, cached) and stopped by the session
fixture in ``conftest``. Two nodes, so a collection's shards live in different
JVMs and every read crosses them. When Java or Maven is missing the tests skip
locally and fail in CI (``CI`` set), as the PostgreSQL ones do.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from rcpkit.engine.store.solr.localcloud import (
    Cluster,
    create_collection,
    delete_collection,
    start_cluster,
)

__all__ = ["cluster", "drop_collection", "fresh_collection", "stop_cluster"]

NODES = 2
# How long a killed node stays in `live_nodes` (its ZooKeeper session's expiry): the
# fault round waits that long after each kill. solr.xml's 30 s is production's
# default; Solr 8's 15 s still leaves a loaded machine's JVM room to answer pings.
ZK_TIMEOUT_MS = 15_000
_lock = threading.Lock()
_cluster: Cluster | None = None
_folder: Path | None = None
_failure: str | None = None
_names = itertools.count()


def cluster() -> Cluster:
    """The session's cluster, started on first call."""
    global _cluster, _failure, _folder
    with _lock:
        if _cluster is None and _failure is None:
            _folder = Path(tempfile.mkdtemp(prefix="rcpkit-solr-"))
            try:
                _cluster = start_cluster(
                    _folder / "cloud", nodes=NODES, shards=1, zk_timeout=ZK_TIMEOUT_MS
                )
            except Exception as error:
                _failure = f"a local SolrCloud could not start: {error}"
        if _cluster is None:
            _unavailable(_failure or "a local SolrCloud could not start")
            raise AssertionError("unreachable")
        return _cluster


def _unavailable(message: str) -> None:
    if os.environ.get("CI") or (shutil.which("java") and shutil.which("mvn")):
        pytest.fail(message)
    pytest.skip(message)


def fresh_collection(shards: int = 2, replicas: int = 1) -> str:
    """A new, empty collection on the rcpkit configset, and its store URL."""
    running = cluster()
    name = f"test_{os.getpid()}_{next(_names)}"
    create_collection(running.http(), name, shards, replicas)
    return running.collection_url(name)


def drop_collection(url: str) -> None:
    if _cluster is not None:
        delete_collection(_cluster.http(), url.rsplit("/", 1)[1])


def stop_cluster() -> None:
    global _cluster
    with _lock:
        if _cluster is not None:
            _cluster.stop()
            _cluster = None
        if _folder is not None:
            shutil.rmtree(_folder, ignore_errors=True)
