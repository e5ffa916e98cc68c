"""A Solr node killed under load (issue 48, item 4): ``rcpkit bench solr-faults``'s smoke round.

The campaign's own code (``rcpkit_bench.solr_faults``), one short round, on the
session's SolrCloud (``solr_support``: two nodes, one JVM each), through real
``rcpkit serve --http`` processes: a collection with replicationFactor 2 under
a writer and a reader while a node is killed with SIGKILL, and one with a shard
per node and replicationFactor 1 whose dead shard must be named in
``_meta.degraded``. The round restarts the node and waits until its replicas
are active again, so the session's cluster is whole afterwards.

The second test shows the audit is not blind: a write that never happened, a
duplicated row and a wrongly expected dead shard are each counted.

Every wait is for an event of the cluster (a node leaving ``live_nodes``, the
writes that follow, replicas becoming active), under the campaign's bounds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import solr_support

from rcpkit.engine.store.solr.collection import Collection
from rcpkit.engine.store.solr.copies import shard_of, shard_ranges
from rcpkit.engine.store.solr.localcloud import Cluster, create_collection, delete_collection
from rcpkit_bench.solr_cloud import (
    RcpServer,
    active,
    live_nodes,
    node_name,
    placement,
    wait_until,
)
from rcpkit_bench.solr_faults import (
    BOUND,
    EMBEDDER,
    PLANS,
    FaultAudit,
    _audit_durable,
    _Fragile,
    _rejoin,
    run_campaign,
)

pytestmark = pytest.mark.heavy


def test_a_killed_node_loses_no_acknowledged_write_names_its_dead_shard_and_rejoins(
    tmp_path: Path,
) -> None:
    cluster = solr_support.cluster()
    plan = PLANS["smoke"]
    audit = run_campaign(cluster, plan, seed=48, folder=tmp_path)
    assert audit.violations == 0, audit.problems
    assert audit.rounds == 1, audit.problems
    assert audit.acknowledged >= plan.kill_after[0] + plan.after_kill
    assert audit.requests > audit.acknowledged  # the reader's too, all answered
    assert "dead shards named: shard" in audit.summary[0]  # one shard per node: one died


def test_the_audit_counts_a_lost_write_a_duplicate_and_a_wrong_degraded(tmp_path: Path) -> None:
    cluster = solr_support.cluster()
    name = "faults_audit"
    create_collection(cluster.http(), name, shards=2, replicas=1)
    server = RcpServer(cluster.collection_url(name), tmp_path / "index", EMBEDDER)
    try:
        documents = [{"id": f"a{n}", "text": f"audit note {n} on wings"} for n in range(4)]
        reply, _ = server.call("index/add", {"documents": documents})
        assert reply is not None and "result" in reply, reply
        clean = FaultAudit()
        _audit_durable(cluster, name, [f"a{n}" for n in range(4)], clean)
        assert clean.violations == 0, clean.problems

        rows = Collection(cluster.http(), name)
        (chunk,) = rows.docs({"query": "*:*", "filter": ["kind:chunk", 'doc_id:"a0"'],
                              "fields": "*", "limit": 1})  # fmt: skip
        twin = {key: value for key, value in chunk.items() if not key.startswith("_")}
        twin |= {"id": f"{chunk['id']}-twin", "key": int(chunk["key"]) + 1}
        rows.update([twin], commit=True)
        audit = FaultAudit()
        _audit_durable(cluster, name, ["a0", "a1", "never-written"], audit)
        assert (audit.lost, audit.duplicates) == (1, 1), audit.problems

        # Every node is live: expecting a dead shard must be counted, not waved through.
        wrong = _Fragile(server, total=4, dead={"shard2"}, left=2)
        wrong.check(audit)
        assert audit.degraded_wrong == 1, audit.problems
    finally:
        server.stop()
        delete_collection(cluster.http(), name)


def test_an_acknowledged_add_survives_a_crash_of_its_only_replica(tmp_path: Path) -> None:
    """Acknowledged after a soft commit: durable by the fsynced update log alone.

    The collection's background hard commit is off, so nothing but the update log
    holds the rows when the only replica is killed with SIGKILL; the node replays
    it when it starts again, and the rows are there, once.
    """
    cluster = solr_support.cluster()
    name = "faults_crash"
    cluster.http().admin(
        "CREATE", name=name, numShards=1, replicationFactor=1, waitForFinalState="true",
        **{"collection.configName": "rcpkit", "property.solr.autoCommit.maxTime": "-1"},
    )  # fmt: skip
    server = RcpServer(cluster.collection_url(name), tmp_path / "index", EMBEDDER)
    try:
        ids = [f"k{n}" for n in range(6)]
        documents = [{"id": i, "text": f"crash note {i} on wing flutter"} for i in ids]
        reply, failure = server.call("index/add", {"documents": documents})
        assert reply is not None and "result" in reply, (reply, failure)
        (replica,) = placement(cluster, name)["shard1"]
        victim = next(
            at for at in range(len(cluster.nodes))
            if node_name(cluster, at) == replica["node_name"]
        )  # fmt: skip
        cluster.kill_node(victim)
        audit = FaultAudit()
        _rejoin(cluster, victim, [name], audit)
        _audit_durable(cluster, name, ids, audit)
        assert audit.violations == 0, audit.problems
        stats, failure = server.call("x-rcpkit/stats", {})
        assert stats is not None and stats["result"]["chunks"] == len(ids), (stats, failure)
    finally:
        server.stop()
        delete_collection(cluster.http(), name)


def test_a_server_opens_with_its_records_shard_down_and_answers_retryably_until_it_is_back(
    tmp_path: Path,
) -> None:
    """The store's records (counters, settings) live on one shard; with it dead, a
    server still starts: its settings are read from their copies on the other shard
    (``store.solr.copies``). What needs the version counter gets ``-32010`` retryable,
    never ``-32603``, until the shard is back; then the same server answers.
    """
    cluster = solr_support.cluster()
    name = "faults_records"
    create_collection(cluster.http(), name, shards=2, replicas=1)
    hosts = ",".join(f"127.0.0.1:{node.port}" for node in cluster.nodes)
    url = f"solr://{hosts}/solr/{name}"  # every node: the one killed is not the only way in
    writer = RcpServer(url, tmp_path / "writer", EMBEDDER)
    victim = None
    try:
        documents = [{"id": f"r{n}", "text": f"records note {n} on wing flutter"} for n in range(4)]
        reply, failure = writer.call("index/add", {"documents": documents})
        assert reply is not None and "result" in reply, (reply, failure)
        writer.stop()
        shards = placement(cluster, name)
        records = shard_of("rcpkit", shard_ranges(_shards(cluster, name))) or ""
        (holder,) = shards[records]
        victim = next(at for at in range(len(cluster.nodes))
                      if node_name(cluster, at) == holder["node_name"])  # fmt: skip
        # The other shard lives on the other node: the records' death is not the cluster's.
        assert all(r["node_name"] != holder["node_name"] for s, (r,) in shards.items()
                   if s != records)  # fmt: skip
        cluster.kill_node(victim)
        assert wait_until(lambda: node_name(cluster, victim) not in live_nodes(cluster), BOUND)

        reader = RcpServer(url, tmp_path / "reader", EMBEDDER)  # before the fix: exit 2
        try:
            asks = [("retrieve", {"query": "wing flutter", "k": 3}),
                    ("index/add", {"documents": [{"id": "x", "text": "x y"}]})]  # fmt: skip
            for method, params in asks:
                answer, failure = reader.call(method, params)
                assert answer is not None and "error" in answer, (method, answer, failure)
                assert answer["error"]["code"] == -32010, answer
                assert answer["error"]["data"]["retryable"] is True, answer
            cluster.restart_node(victim)
            victim = None
            assert wait_until(lambda: active(cluster, [name]), BOUND)
            answer, failure = reader.call("retrieve", {"query": "wing flutter", "k": 3})
            assert answer is not None and len(answer["result"]["hits"]) == 3, (answer, failure)
        finally:
            reader.stop()
    finally:
        writer.stop()
        if victim is not None:  # the session's cluster is whole again for the next test
            cluster.restart_node(victim)
            wait_until(lambda: active(cluster, [name]), BOUND)
        delete_collection(cluster.http(), name)


def _shards(cluster: Cluster, name: str) -> dict[str, Any]:
    shards: dict[str, Any] = cluster.http().admin("CLUSTERSTATUS", collection=name)["cluster"][
        "collections"
    ][name]["shards"]
    return shards
