"""``rcpkit bench solr-faults``: a SolrCloud node killed with SIGKILL under reads and writes.

Issue 48, item 4. A local SolrCloud of three nodes (one JVM each, as ``rcpkit
solr up`` starts it). Each round creates two collections on it and puts a real
``rcpkit serve --http`` in front of each:

* ``durable`` (2 shards, replicationFactor 2): writers send ``index/add``, one
  document a request with an idempotency key, and retry a retryable error as a
  client does (§12.2); readers send ``retrieve`` (sparse, dense, hybrid).
* ``fragile`` (one shard per node, replicationFactor 1): a few documents.

After a random number of acknowledged writes a random node is killed with
SIGKILL. Once the cluster has seen it die (it leaves ``live_nodes``): the
fragile collection's retrieve must be answered from the live shards and name
exactly the shards that lived only on the dead node in ``_meta.degraded``
(``records`` too when that shard held the store's own records); the durable
writers must go on being acknowledged (the cluster failed over). Then the
node is restarted and must rejoin (every replica active again), and the
durable collection is audited through Solr: every acknowledged document there,
none twice (chunks counted by document id and position), every replica of a
shard holding the same rows.

Violations (any makes ``rcpkit bench`` exit 1): an answer that is neither a
result nor a retryable error (§12.2: ``-32010``, ``-32011``, ``-32014``),
``-32603`` above all; a request unanswered; a lost or duplicated acknowledged
write; writes that never resume; a dead shard not named (or a live one named);
a node that does not rejoin; replicas that disagree.

    rcpkit bench solr-faults                 # 5 rounds
    rcpkit bench solr-faults --rounds 20 --seed 7
    rcpkit bench solr-faults --smoke         # one short round (the test suite's)

Every wait is for an event of the cluster (its state, the writes that follow a
kill), each under a generous bound; the embedder is ``hashing:64`` (the write
and read paths are under test, not the model).
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rcpkit.engine.store.solr.collection import Collection
from rcpkit.engine.store.solr.localcloud import Cluster, create_collection, delete_collection
from rcpkit_bench.report import Figure, Scale
from rcpkit_bench.solr_cloud import (
    Answer,
    RcpServer,
    active,
    live_nodes,
    local_cluster,
    node_name,
    placement,
    shard_counts,
    wait_until,
)

__all__ = ["PLANS", "FaultAudit", "Plan", "figures", "run", "run_campaign", "run_round"]

EMBEDDER = "hashing:64"
NODES = 3
BOUND = 600.0  # seconds: a bound on each wait for an event, never an expectation
# §12.2: the codes a client retries (with backoff); anything else ends a request.
RETRYABLE = (-32010, -32011, -32014)
_BACKOFF = 0.2  # a client's pause before it retries a retryable error
MODES = ("sparse", "dense", "hybrid")


@dataclass(frozen=True)
class Plan:
    rounds: int
    writers: int
    readers: int
    kill_after: tuple[int, int]  # acknowledged writes before the kill, drawn in this range
    after_kill: int  # acknowledged writes wanted once the cluster has seen the node dead
    fragile_documents: int = 30


PLANS: dict[Scale, Plan] = {
    "full": Plan(rounds=5, writers=2, readers=2, kill_after=(10, 40), after_kill=20),
    "quick": Plan(rounds=2, writers=2, readers=2, kill_after=(5, 20), after_kill=10),
    "smoke": Plan(rounds=1, writers=1, readers=1, kill_after=(2, 6), after_kill=3,
                  fragile_documents=12),
}  # fmt: skip

# The audit's counters that must stay 0.
VIOLATIONS = (
    "internal_errors", "other_errors", "unanswered", "lost", "duplicates",
    "stalled", "degraded_wrong", "not_rejoined", "diverged",
)  # fmt: skip


@dataclass
class FaultAudit:
    """What the campaign counted; every counter in ``VIOLATIONS`` must stay 0."""

    rounds: int = 0
    requests: int = 0
    retryable: int = 0  # allowed: the cluster failing over
    acknowledged: int = 0
    unconfirmed: int = 0  # writes still unacknowledged when the round ended (allowed)
    internal_errors: int = 0
    other_errors: int = 0
    unanswered: int = 0
    lost: int = 0
    duplicates: int = 0
    stalled: int = 0  # writes no longer acknowledged (before the kill, or no failover)
    degraded_wrong: int = 0
    not_rejoined: int = 0
    diverged: int = 0
    summary: list[str] = field(default_factory=list)  # one line per round
    problems: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, counter: str, message: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + by)
            if len(self.problems) < 50:
                self.problems.append(message)

    def count(self, counter: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + by)

    @property
    def violations(self) -> int:
        return sum(getattr(self, name) for name in VIOLATIONS)

    def answered(self, answer: Answer, method: str) -> dict[str, Any] | None:
        """The result; None after a retryable error (allowed) or a violation (counted)."""
        reply, failure = answer
        self.count("requests")
        if reply is None:
            self.fail("unanswered", f"{method}: {failure}")
            return None
        if "result" in reply:
            result: dict[str, Any] = reply["result"]
            return result
        error = reply.get("error") or {}
        if error.get("code") == -32603:
            self.fail("internal_errors", f"{method}: {error}")
        elif error.get("code") in RETRYABLE and (error.get("data") or {}).get("retryable", True):
            self.count("retryable")
        else:
            self.fail("other_errors", f"{method}: {error}")
        return None


@dataclass
class _Traffic:
    """The durable collection's writers and readers, and what they were told."""

    server: RcpServer
    audit: FaultAudit
    prefix: str
    acknowledged: list[str] = field(default_factory=list)
    progress: threading.Condition = field(default_factory=threading.Condition)
    stop: threading.Event = field(default_factory=threading.Event)

    def acknowledged_count(self) -> int:
        with self.progress:
            return len(self.acknowledged)

    def wait_for(self, count: int) -> bool:
        """Until ``count`` writes are acknowledged (an event); False past the bound."""
        with self.progress:
            return self.progress.wait_for(lambda: len(self.acknowledged) >= count, BOUND)


def _writer(traffic: _Traffic, number: int) -> None:
    for serial in itertools.count():
        doc_id = f"{traffic.prefix}w{number}-{serial}"
        params = {"documents": [{"id": doc_id, "text": f"{doc_id} notes on wings and flaps"}],
                  "_meta": {"idempotencyKey": doc_id}}  # fmt: skip
        while traffic.audit.answered(traffic.server.call("index/add", params), "add") is None:
            # Retried as a client retries: the same request, the same idempotency key.
            if traffic.stop.is_set() or not traffic.server.alive():
                traffic.audit.count("unconfirmed")
                return
            traffic.stop.wait(_BACKOFF)
        with traffic.progress:
            traffic.acknowledged.append(doc_id)
            traffic.progress.notify_all()
        if traffic.stop.is_set():
            return


def _reader(traffic: _Traffic, number: int) -> None:
    modes = itertools.cycle(MODES[number % 3 :] + MODES[: number % 3])
    while not traffic.stop.is_set() and traffic.server.alive():
        params = {"query": "wings flaps", "k": 5, "mode": next(modes)}
        traffic.audit.answered(traffic.server.call("retrieve", params), "retrieve")


def run_round(
    cluster: Cluster, plan: Plan, audit: FaultAudit, rng: random.Random, folder: Path, number: int
) -> None:
    """One round on ``cluster`` (every node live): kill, fail over, rejoin, audit.

    Adds to ``audit``; leaves every node live and no collection of its own behind.
    """
    durable, fragile = f"faults{number}_durable", f"faults{number}_fragile"
    http = cluster.http()
    create_collection(http, durable, shards=2, replicas=2)
    create_collection(http, fragile, shards=len(cluster.nodes), replicas=1)
    victim, kill_at = rng.randrange(len(cluster.nodes)), rng.randint(*plan.kill_after)
    servers: list[RcpServer] = []
    try:
        servers.append(RcpServer(cluster.collection_url(durable), folder / durable, EMBEDDER))
        servers.append(RcpServer(cluster.collection_url(fragile), folder / fragile, EMBEDDER))
        traffic = _Traffic(servers[0], audit, f"r{number}")
        fragile_side = _Fragile.seed(servers[1], cluster, fragile, victim, plan, audit)
        workers = [(_writer, n) for n in range(plan.writers)]
        workers += [(_reader, n) for n in range(plan.readers)]
        threads = [threading.Thread(target=work, args=(traffic, n)) for work, n in workers]
        for thread in threads:
            thread.start()
        try:
            _kill_under_load(cluster, traffic, fragile_side, victim, kill_at, plan)
        finally:
            traffic.stop.set()
            for thread in threads:
                thread.join()
        _rejoin(cluster, victim, [durable, fragile], audit)
        _audit_durable(cluster, durable, traffic.acknowledged, audit)
        audit.count("acknowledged", len(traffic.acknowledged))
        audit.summary.append(
            f"round {number}: {node_name(cluster, victim)} killed after {kill_at} acknowledged"
            f" writes; {len(traffic.acknowledged)} acknowledged in all;"
            f" dead shards named: {', '.join(sorted(fragile_side.dead)) or 'none hosted there'}"
        )
    finally:
        for server in servers:
            server.stop()
        if not _running(cluster, victim):  # the round failed midway: the next one needs it
            _rejoin(cluster, victim, [durable, fragile], audit)
        for name in (durable, fragile):
            delete_collection(cluster.http(), name)
    audit.count("rounds")


def _kill_under_load(
    cluster: Cluster,
    traffic: _Traffic,
    fragile: _Fragile,
    victim: int,
    kill_at: int,
    plan: Plan,
) -> None:
    """Kill ``victim`` once ``kill_at`` writes are acknowledged; check the failover."""
    audit = traffic.audit
    if not traffic.wait_for(kill_at):
        audit.fail("stalled", f"only {traffic.acknowledged_count()} writes before the kill")
    cluster.kill_node(victim)
    dead = node_name(cluster, victim)
    if not wait_until(lambda: dead not in live_nodes(cluster), BOUND, traffic.stop):
        audit.fail("stalled", f"the cluster never saw {dead} die")
        return
    fragile.check(audit)
    wanted = traffic.acknowledged_count() + plan.after_kill
    if not traffic.wait_for(wanted):  # writes acknowledged with the node dead: failed over
        audit.fail("stalled", f"{traffic.acknowledged_count()} of {wanted} writes after the kill")


def _running(cluster: Cluster, position: int) -> bool:
    """Whether node ``position``'s JVM is still there (not killed, or restarted)."""
    try:
        return b"SolrNode" in Path(f"/proc/{cluster.nodes[position].pid}/cmdline").read_bytes()
    except OSError:
        return False


def _rejoin(cluster: Cluster, victim: int, collections: list[str], audit: FaultAudit) -> None:
    """Start the killed node again; it must rejoin (live, every replica active)."""
    try:
        cluster.restart_node(victim)
    except RuntimeError as error:
        audit.fail("not_rejoined", f"{node_name(cluster, victim)} did not restart: {error}")
        return
    if not wait_until(lambda: active(cluster, collections), BOUND):
        audit.fail("not_rejoined", f"{node_name(cluster, victim)}: replicas not active")


def _audit_durable(
    cluster: Cluster, collection: str, acknowledged: list[str], audit: FaultAudit
) -> None:
    """Every acknowledged document there, once; every replica of a shard alike."""
    rows = Collection(cluster.http(), collection)
    chunks = Counter(
        (doc["doc_id"], doc["idx"]) for doc in rows.each(["kind:chunk"], "doc_id,idx,id", "id asc")
    )
    documents = Counter(
        doc["doc_id"] for doc in rows.each(["kind:document"], "doc_id,id", "id asc")
    )
    chunked = {doc_id for doc_id, _ in chunks}
    for doc_id in acknowledged:
        if doc_id not in chunked or doc_id not in documents:
            audit.fail("lost", f"{collection}: acknowledged {doc_id} is not there")
    for key, seen in [*chunks.items(), *documents.items()]:
        if seen > 1:
            audit.fail("duplicates", f"{collection}: {key} {seen} times", by=seen - 1)
    for query in ("kind:chunk", "kind:document"):
        for shard, counts in shard_counts(cluster, collection, query).items():
            if len(set(counts)) > 1:
                audit.fail("diverged", f"{collection} {shard}: replicas hold {counts} {query}")


@dataclass
class _Fragile:
    """The replicationFactor-1 collection: which shards die with the victim, what is left."""

    server: RcpServer
    total: int
    dead: set[str]
    left: int  # documents on the shards that stay live

    @classmethod
    def seed(
        cls,
        server: RcpServer,
        cluster: Cluster,
        collection: str,
        victim: int,
        plan: Plan,
        audit: FaultAudit,
    ) -> _Fragile:
        documents = [
            {"id": f"f{n}", "text": f"fragile note {n} on wings"}
            for n in range(plan.fragile_documents)
        ]
        _until_result(server, "index/add", {"documents": documents}, audit)
        # Read once whole: the server then knows the version (§7.5) should the records'
        # shard be the dead one.
        whole = _until_result(server, "retrieve", _everything(len(documents)), audit)
        if len(whole.get("hits", [])) != len(documents) or (whole.get("_meta") or {}).get(
            "degraded"
        ):
            audit.fail("degraded_wrong", f"{collection}: not whole before the kill: {whole}")
        dead = {
            shard
            for shard, replicas in placement(cluster, collection).items()
            if all(replica["node_name"] == node_name(cluster, victim) for replica in replicas)
        }
        counts = shard_counts(cluster, collection, "kind:chunk")
        left = sum(sum(found) for shard, found in counts.items() if shard not in dead)
        return cls(server, len(documents), dead, left)

    def check(self, audit: FaultAudit) -> None:
        """The dead shards named in ``_meta.degraded``, the live ones' documents found."""
        result = _until_result(self.server, "retrieve", _everything(self.total), audit)
        named = {str(part.get("shard")) for part in (result.get("_meta") or {}).get("degraded", [])}
        # "records": the store's own records lived on a dead shard (the version is then
        # the last one this server read).
        shards = named - {"records"}
        hits = len(result.get("hits", []))
        if shards != self.dead or ("records" in named and not self.dead) or hits != self.left:
            audit.fail(
                "degraded_wrong",
                f"degraded named {sorted(named)} for dead {sorted(self.dead)};"
                f" {hits} hits for {self.left} documents on live shards",
            )


def _everything(total: int) -> dict[str, Any]:
    return {"query": "wings", "k": total, "mode": "sparse"}


def _until_result(
    server: RcpServer, method: str, params: dict[str, Any], audit: FaultAudit
) -> dict[str, Any]:
    """The result, retrying a retryable error as a client does; {} past the bound."""
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline and server.alive():
        result = audit.answered(server.call(method, params), method)
        if result is not None:
            return result
        threading.Event().wait(_BACKOFF)
    audit.fail("stalled", f"{method}: no result within the bound")
    return {}


def run_campaign(cluster: Cluster, plan: Plan, seed: int, folder: Path) -> FaultAudit:
    """``plan.rounds`` rounds on ``cluster``; the audit (its ``summary``: one line a round)."""
    audit = FaultAudit()
    rng = random.Random(seed)
    for number in range(1, plan.rounds + 1):
        run_round(cluster, plan, audit, rng, folder, number)
    return audit


def run(scale: Scale, rounds: int | None = None, seed: int | None = None) -> list[Figure]:
    """The campaign on a local cluster of three nodes, as report rows."""
    plan = PLANS[scale] if rounds is None else replace(PLANS[scale], rounds=rounds)
    seed = random.SystemRandom().randrange(1 << 32) if seed is None else seed
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rcpkit-solr-faults-") as temporary:
        cluster = local_cluster(Path(temporary) / "cloud", NODES)
        try:
            audit = run_campaign(cluster, plan, seed, Path(temporary))
        finally:
            cluster.stop()
    for line in audit.summary:
        print(f"rcpkit bench solr-faults: {line}", file=sys.stderr)
    for problem in audit.problems:
        print(f"rcpkit bench solr-faults: {problem}", file=sys.stderr)
    return figures(audit, seed, time.monotonic() - started)


def figures(audit: FaultAudit, seed: int, seconds: float) -> list[Figure]:
    context = (
        f"seed {seed}; {audit.rounds} rounds on {NODES} nodes, {audit.requests} requests,"
        f" {audit.acknowledged} writes acknowledged; embedder {EMBEDDER}; {seconds:.0f} s"
    )
    rows = (
        ("rounds (a node killed, failed over, rejoined)", audit.rounds, "rounds"),
        ("requests answered", audit.requests - audit.unanswered, "requests"),
        ("retryable errors while failing over (allowed)", audit.retryable, "answers"),
        ("writes unconfirmed at a round's end (allowed)", audit.unconfirmed, "writes"),
        ("-32603 answers", audit.internal_errors, "answers"),
        ("other errors (not retryable)", audit.other_errors, "answers"),
        ("requests unanswered (hang, crash)", audit.unanswered, "requests"),
        ("acknowledged writes lost", audit.lost, "docs"),
        ("duplicate rows (by document id and position)", audit.duplicates, "rows"),
        ("writes stalled (no failover)", audit.stalled, "rounds"),
        ("dead shard not named in _meta.degraded", audit.degraded_wrong, "reads"),
        ("node not rejoined (replicas not active)", audit.not_rejoined, "nodes"),
        ("replicas of a shard that disagree", audit.diverged, "shards"),
        ("violations", audit.violations, "failures"),
    )
    return [
        Figure(
            "solr-faults",
            f"solr-faults: {name}",
            float(value),
            unit,
            note=context if i == 0 else "",
        )
        for i, (name, value, unit) in enumerate(rows)
    ]
