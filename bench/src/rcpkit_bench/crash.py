"""``rcpkit bench crash``: kill -9 a real ``rcpkit serve`` mid-``index/add``, then audit.

Each round spawns ``rcpkit serve --stdio --engine index`` on one index folder,
pipelines a few ``index/add`` batches (explicit ids and ``_meta.idempotencyKey``),
and sends SIGKILL after a random delay drawn over the time the batches take, so
the kill lands before, between and inside commits. The next round's server must
open the index, and before it writes anything the campaign audits the store:

* lost: an acknowledged document that is not live with the text it was sent;
* duplicates: an id live more than once, or a live chunk of a retired document;
* partial: a batch that was sent but never acknowledged with only some ids live;
* integrity: ``PRAGMA integrity_check`` and FTS5's ``integrity-check``;
* dense: a live chunk whose vector is not a finite unit row of the model's
  dimension, or a dense ``retrieve`` of an acknowledged text (over the wire, from
  the reopened server's in-memory index) whose top hit is not that document;
* idempotency: re-sending an acknowledged batch with its key must return the
  original result (same ``indexVersion``); unacknowledged batches are retried
  with their keys, as a client would, and then count as acknowledged.

The embedder is the deterministic ``hashing:64`` model: the campaign tests the
write path and recovery, not the model, and this keeps a round to about a second.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from rcpkit.engine.store.sqlite.reads import LIVE_DOCUMENT_TEXTS
from rcpkit_bench.report import Figure, Scale

__all__ = ["CrashAudit", "campaign_figures", "describe", "figures", "run", "run_campaign"]

EMBEDDER = "hashing:64"
_DIMENSION = 64
_KILLS: dict[Scale, int] = {"full": 240, "quick": 40, "smoke": 4}
_BATCHES_PER_ROUND = (2, 6)
_DOCUMENTS_PER_BATCH = (1, 48)
_REPLY_TIMEOUT = 60.0
_FILLER = "crash campaign write path recovery sqlite wal commit fsync snapshot".split()


@dataclass
class Batch:
    """One index/add request: what was sent and, if it was answered, the answer."""

    key: str
    documents: list[dict[str, str]]
    result: dict[str, Any] | None = None

    @property
    def ids(self) -> list[str]:
        return [document["id"] for document in self.documents]


@dataclass
class CrashAudit:
    """What the campaign counted; every field but the first three must stay 0."""

    kills: int = 0
    kills_mid_batch: int = 0  # a batch was in flight (sent, unanswered) at the kill
    acknowledged_documents: int = 0
    lost: int = 0
    duplicates: int = 0
    partial_batches: int = 0
    integrity_failures: int = 0
    dense_mismatches: int = 0
    replay_mismatches: int = 0
    reopen_failures: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, counter: str, message: str) -> None:
        setattr(self, counter, getattr(self, counter) + 1)
        if len(self.problems) < 50:
            self.problems.append(message)

    @property
    def clean(self) -> bool:
        counters = (
            self.lost, self.duplicates, self.partial_batches, self.integrity_failures,
            self.dense_mismatches, self.replay_mismatches, self.reopen_failures,
        )  # fmt: skip
        return not any(counters)


class _Server:
    """A spawned ``rcpkit serve --stdio`` on the index; a thread collects its replies."""

    def __init__(
        self, index: Path, stderr: IO[bytes], *, create: bool = False, extra: Sequence[str] = ()
    ) -> None:
        command = [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index"]
        command += ["--index", str(index), "--embedder", EMBEDDER, *extra]
        if create:  # a missing index is an error for serve; a reopen must find the old one
            command.append("--create")
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        self._replies: dict[object, dict[str, Any]] = {}
        self.arrived_at: dict[object, float] = {}
        self._arrived = threading.Condition()
        self._ended = False  # the server's stdout closed: no reply will come any more
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message:
                with self._arrived:
                    self._replies[message["id"]] = message
                    self.arrived_at[message["id"]] = time.monotonic()
                    self._arrived.notify_all()
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    def send(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        frame = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(frame).encode() + b"\n")
        self.process.stdin.flush()
        return self._next_id

    def reply(self, id: int, timeout: float = _REPLY_TIMEOUT) -> dict[str, Any]:
        with self._arrived:
            if not self._arrived.wait_for(lambda: id in self._replies or self._ended, timeout):
                raise TimeoutError(f"no reply to request {id} in {timeout:.0f} s")
            if id not in self._replies:
                code = self.process.wait(timeout=_REPLY_TIMEOUT)
                raise RuntimeError(f"the server exited ({code}) before replying to {id}")
            return self._replies[id]

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.reply(self.send(method, params))

    def answered(self) -> dict[object, dict[str, Any]]:
        with self._arrived:
            return dict(self._replies)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self._finish()

    def shutdown(self) -> None:
        self.call("shutdown", {})
        assert self.process.stdin is not None
        self.process.stdin.close()
        self._finish()

    def _finish(self) -> None:
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()


@dataclass
class _Campaign:
    index: Path
    rng: random.Random
    audit: CrashAudit
    acknowledged: list[Batch] = field(default_factory=list)
    unanswered: list[Batch] = field(default_factory=list)
    horizon: float = 0.2  # seconds a round's batches take (a moving average of rounds)
    serial: int = 0

    def batch(self) -> Batch:
        self.serial += 1
        size = self.rng.randint(*_DOCUMENTS_PER_BATCH)
        documents = [
            {"id": f"b{self.serial}-d{i}", "text": self._text(f"b{self.serial}x{i}")}
            for i in range(size)
        ]
        return Batch(f"crash-{self.serial}", documents)

    def _text(self, marker: str) -> str:
        words = self.rng.choices(_FILLER, k=self.rng.randint(20, 120))
        return f"{marker} " + " ".join(words) + f" {marker}"


def _add(server: _Server, batch: Batch) -> int:
    params = {"documents": batch.documents, "_meta": {"idempotencyKey": batch.key}}
    return server.send("index/add", params)


def _open(campaign: _Campaign, stderr: IO[bytes]) -> _Server:
    fresh = not (campaign.index / "index.sqlite3").exists() and not campaign.audit.kills
    server = _Server(campaign.index, stderr, create=fresh)
    hello = server.call("initialize", {"protocolVersion": 1})
    if "result" not in hello:
        raise RuntimeError(f"initialize failed after a crash: {hello}")
    return server


def _round(campaign: _Campaign, server: _Server, *, settle: bool = False) -> None:
    """Pipeline a few batches, SIGKILL the server at a random moment, keep the answers.

    ``settle`` (for tests of the audit itself) kills only once every batch was answered.
    """
    batches = [campaign.batch() for _ in range(campaign.rng.randint(*_BATCHES_PER_ROUND))]
    started = time.monotonic()
    ids = [_add(server, batch) for batch in batches]
    if settle:
        for id in ids:
            server.reply(id)
    else:
        # Not a wait for anything: the random moment of the kill, over the batches' span.
        time.sleep(campaign.rng.uniform(0.0, campaign.horizon))
    server.kill()
    replies = server.answered()
    for batch, id in zip(batches, ids, strict=True):
        reply = replies.get(id)
        if reply is not None and "result" in reply:
            batch.result = reply["result"]
            campaign.acknowledged.append(batch)
        else:
            campaign.unanswered.append(batch)
    if all(id in replies for id in ids):
        took = max(server.arrived_at[id] for id in ids) - started
        campaign.horizon = 0.7 * campaign.horizon + 0.3 * took
    else:
        campaign.audit.kills_mid_batch += 1
    campaign.audit.kills += 1


def _audit_store(campaign: _Campaign) -> None:
    """The store after a crash, read directly (the reopened server is idle meanwhile)."""
    audit = campaign.audit
    with closing(sqlite3.connect(campaign.index / "index.sqlite3", timeout=30)) as connection:
        _integrity(connection, audit)
        live = dict(connection.execute(LIVE_DOCUMENT_TEXTS))
        _duplicates(connection, audit)
        _vectors(connection, audit)
    for batch in campaign.acknowledged:
        for document in batch.documents:
            if live.get(document["id"]) != document["text"]:
                audit.fail("lost", f"acknowledged {document['id']} ({batch.key}) is not live")
    for batch in campaign.unanswered:
        present = sum(document["id"] in live for document in batch.documents)
        if present not in (0, len(batch.documents)):
            audit.fail("partial_batches", f"{batch.key}: {present}/{len(batch.ids)} ids live")


def _integrity(connection: sqlite3.Connection, audit: CrashAudit) -> None:
    (verdict,) = connection.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        audit.fail("integrity_failures", f"PRAGMA integrity_check: {verdict}")
    try:
        with connection:
            connection.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as error:
        audit.fail("integrity_failures", f"FTS5 integrity-check: {error}")


def _duplicates(connection: sqlite3.Connection, audit: CrashAudit) -> None:
    twice = connection.execute(
        "SELECT tenant, doc_id FROM documents WHERE removed IS NULL"
        " GROUP BY tenant, doc_id HAVING count(*) > 1"
    ).fetchall()
    for tenant, doc_id in twice:
        audit.fail("duplicates", f"{doc_id!r} (tenant {tenant!r}) is live twice")
    (orphans,) = connection.execute(
        "SELECT count(*) FROM chunks c JOIN documents d ON c.doc_key = d.doc_key"
        " WHERE c.removed IS NULL AND d.removed IS NOT NULL"
    ).fetchone()
    if orphans:
        audit.fail("duplicates", f"{orphans} live chunks of retired documents")
    (chunkless,) = connection.execute(
        "SELECT count(*) FROM documents d WHERE d.removed IS NULL AND NOT EXISTS"
        " (SELECT 1 FROM chunks c WHERE c.doc_key = d.doc_key AND c.removed IS NULL)"
    ).fetchone()
    if chunkless:
        audit.fail("partial_batches", f"{chunkless} live documents without a live chunk")


def _vectors(connection: sqlite3.Connection, audit: CrashAudit) -> None:
    for key, blob in connection.execute("SELECT key, vector FROM chunks WHERE removed IS NULL"):
        vector = np.frombuffer(blob, dtype=np.float32)
        norm = float(np.linalg.norm(vector)) if vector.size else 0.0
        if vector.size != _DIMENSION or not np.isfinite(vector).all() or abs(norm - 1) > 1e-3:
            audit.fail("dense_mismatches", f"chunk {key}: not a unit {_DIMENSION}-d vector")


def _audit_server(campaign: _Campaign, server: _Server) -> None:
    """Over the wire: the reopened dense index finds acknowledged texts, keys replay."""
    audit = campaign.audit
    for batch in campaign.rng.sample(campaign.acknowledged, min(2, len(campaign.acknowledged))):
        document = campaign.rng.choice(batch.documents)
        found = server.call("retrieve", {"query": document["text"], "k": 1, "mode": "dense"})
        hits = found.get("result", {}).get("hits", [])
        if not hits or hits[0]["chunk"]["docId"] != document["id"]:
            audit.fail("dense_mismatches", f"dense retrieve of {document['id']} found {hits[:1]}")
        again = server.reply(_add(server, batch))
        if again.get("result") != batch.result:
            audit.fail("replay_mismatches", f"{batch.key}: replay {again} != {batch.result}")
    for batch in campaign.unanswered:  # a client retries what it never saw answered
        retried = server.reply(_add(server, batch))
        if "result" not in retried:
            audit.fail("replay_mismatches", f"{batch.key}: retry after a crash {retried}")
            continue
        batch.result = retried["result"]
        campaign.acknowledged.append(batch)
    campaign.unanswered.clear()


def _audit_dense_in_process(campaign: _Campaign) -> None:
    """At the end: the engine's own dense index, loaded from the store, matches it."""
    from rcpkit.engine.config import load_config
    from rcpkit.engine.open import open_engine

    engine = open_engine(load_config(None, index=campaign.index, embedder=EMBEDDER))
    try:
        with closing(sqlite3.connect(campaign.index / "index.sqlite3")) as connection:
            (live,) = connection.execute(
                "SELECT count(*) FROM chunks WHERE removed IS NULL"
            ).fetchone()
        if engine.dense.live_count() != live:
            message = f"dense index holds {engine.dense.live_count()} live rows, store {live}"
            campaign.audit.fail("dense_mismatches", message)
    finally:
        engine.close()


@contextmanager
def _stderr_log(folder: Path) -> Iterator[IO[bytes]]:
    with (folder / "servers.log").open("wb") as log:
        yield log


def run_campaign(
    kills: int,
    folder: Path,
    seed: int = 20260613,
    progress: Callable[[CrashAudit], None] | None = None,
) -> CrashAudit:
    """``kills`` rounds of write-then-SIGKILL on one index in ``folder``; the audit.

    ``progress`` sees the audit after every round (a long campaign's partial figures).
    """
    campaign = _Campaign(folder / "index", random.Random(seed), CrashAudit())
    with _stderr_log(folder) as log:
        for _ in range(kills):
            server = _reopen(campaign, log)
            if server is None:
                break
            _round(campaign, server)
            if progress is not None:
                progress(_counted(campaign))
        server = _reopen(campaign, log)
        if server is not None:
            server.shutdown()
    _audit_dense_in_process(campaign)
    return _counted(campaign)


def _counted(campaign: _Campaign) -> CrashAudit:
    campaign.audit.acknowledged_documents = len(
        {id for batch in campaign.acknowledged for id in batch.ids}
    )
    return campaign.audit


def _reopen(campaign: _Campaign, log: IO[bytes]) -> _Server | None:
    try:
        server = _open(campaign, log)
    except (RuntimeError, TimeoutError, OSError, ValueError) as error:
        campaign.audit.fail("reopen_failures", f"the index did not reopen: {error}")
        return None
    if campaign.audit.kills:
        _audit_store(campaign)
        _audit_server(campaign, server)
    return server


def run(scale: Scale) -> list[Figure]:
    """The campaign at ``scale`` (240 / 40 / 4 kills) as report rows."""
    return campaign_figures(_KILLS[scale])


def campaign_figures(kills: int, seed: int = 20260613, *, verbose: bool = False) -> list[Figure]:
    """Run a campaign of ``kills`` in a temporary folder; its report rows.

    ``verbose`` prints one line per round to stderr, so a cut-short run still says
    how far it got and what it had counted.
    """
    started = time.monotonic()

    def report(audit: CrashAudit) -> None:
        print(f"rcpkit bench crash: {describe(audit)}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="rcpkit-crash-") as folder:
        audit = run_campaign(kills, Path(folder), seed, report if verbose else None)
    for problem in audit.problems:
        print(f"rcpkit bench crash: {problem}", file=sys.stderr)
    return figures(audit, time.monotonic() - started)


def describe(audit: CrashAudit) -> str:
    """One line with every counter, for progress output."""
    return (
        f"{audit.kills} kills ({audit.kills_mid_batch} mid-batch),"
        f" {audit.acknowledged_documents} acknowledged, lost {audit.lost},"
        f" duplicates {audit.duplicates}, partial {audit.partial_batches},"
        f" integrity {audit.integrity_failures}, dense {audit.dense_mismatches},"
        f" replays {audit.replay_mismatches}, reopen {audit.reopen_failures}"
    )


def figures(audit: CrashAudit, seconds: float) -> list[Figure]:
    context = (
        f"{audit.kills_mid_batch} of {audit.kills} kills with a batch in flight;"
        f" {audit.acknowledged_documents:,} documents acknowledged; embedder {EMBEDDER};"
        f" {seconds:.0f} s"
    )
    rows: Sequence[tuple[str, int, str]] = (
        ("kill -9 during index/add batches", audit.kills, "kills"),
        ("acknowledged documents lost", audit.lost, "docs"),
        ("duplicate documents or chunks", audit.duplicates, "docs"),
        ("partial batches", audit.partial_batches, "batches"),
        ("reopen failures", audit.reopen_failures, "opens"),
        ("integrity check failures (SQLite, FTS5)", audit.integrity_failures, "checks"),
        ("dense index inconsistent with the store", audit.dense_mismatches, "checks"),
        ("idempotent replays not answered alike", audit.replay_mismatches, "replays"),
    )
    return [
        Figure("crash", name, float(value), unit, note=context if i == 0 else "")
        for i, (name, value, unit) in enumerate(rows)
    ]
