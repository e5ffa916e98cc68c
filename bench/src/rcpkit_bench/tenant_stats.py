"""``rcpkit bench tenants``: what one tenant's writes tell another (issues 34 and 35).

One ``rcpkit serve --http --workers 2`` (an embedded index, or PostgreSQL with
``--store``) with two tenant-scoped tokens, ``alpha`` and ``beta``. Beta indexes
its corpus and takes its readings: for each query, the hits with their BM25 (``mode:
sparse``) and hybrid scores and ``confidence``, its ``indexVersion``, a pin of
that version, page 2 through the first page's cursor and its own
``x-rcpkit/stats`` version. Then alpha writes: a bulk of documents in beta's
vocabulary, then many one-document writes (more than the default retention of
64 versions). Beta reads again, and every difference is counted:

* changed: a hit, a BM25 or hybrid score, a ``confidence``, or a page 2 that is
  not what beta saw before alpha wrote;
* versions moved: beta's ``indexVersion`` or its stats version moved;
* expired: beta's pin answered ``-32010`` or its cursor ``-32015``;
* leaks: an error text that names a range of versions (``servable: 9..72``) or a
  version beta never saw; a cursor minted for alpha and replayed by beta that
  is not refused exactly as a made-up cursor is (``-32602``, the same text);
* internal errors (``-32603``), hangs (no answer in 60 s), crashes.

Then beta writes once: its version must move by exactly one.
The embedder is ``hashing:64``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rcpkit_bench.report import Figure, Scale

__all__ = ["TenantAudit", "figures", "run", "run_campaign"]

EMBEDDER = "hashing:64"
ALPHA, BETA = "alpha-bench-token", "beta-bench-token"
_TIMEOUT = 60.0


@dataclass(frozen=True)
class Plan:
    documents: int  # beta's corpus
    bulk: int  # alpha's bulk write (documents)
    small_writes: int  # alpha's one-document writes, past the default retention (64)
    queries: int


PLANS: dict[Scale, Plan] = {
    "full": Plan(documents=300, bulk=200, small_writes=140, queries=20),
    "quick": Plan(documents=120, bulk=200, small_writes=80, queries=10),
    "smoke": Plan(documents=40, bulk=60, small_writes=70, queries=4),
}


@dataclass
class TenantAudit:
    """What the campaign counted; every field after ``comparisons`` must stay 0."""

    requests: int = 0
    comparisons: int = 0
    changed: int = 0
    versions_moved: int = 0
    expired: int = 0
    leaks: int = 0
    internal_errors: int = 0
    hangs: int = 0
    crashes: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, counter: str, message: str) -> None:
        setattr(self, counter, getattr(self, counter) + 1)
        if len(self.problems) < 50:
            self.problems.append(message)

    @property
    def clean(self) -> bool:
        return not any(
            getattr(self, name)
            for name in (
                "changed", "versions_moved", "expired", "leaks", "internal_errors", "hangs",
                "crashes",
            )
        )  # fmt: skip


class _Caller:
    """One tenant's token: stateless JSON POSTs to the server."""

    def __init__(self, url: str, token: str, audit: TenantAudit) -> None:
        parts = urlsplit(url)
        self._host, self._port, self._base = parts.hostname or "", parts.port, parts.path
        self._token = token
        self._audit = audit
        self._connection: http.client.HTTPConnection | None = None

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC answer (``{}`` when none came: counted as a hang or a crash)."""
        self._audit.requests += 1
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._token}"}
        if self._connection is None:
            self._connection = http.client.HTTPConnection(self._host, self._port, timeout=_TIMEOUT)
        try:
            self._connection.request("POST", f"{self._base}/{method}", body, headers)
            answer: dict[str, Any] = json.loads(self._connection.getresponse().read())
        except TimeoutError:
            self._audit.fail("hangs", f"{method}: no answer in {_TIMEOUT:.0f} s")
            self._drop()
            return {}
        except (OSError, http.client.HTTPException, ValueError) as failure:
            self._audit.fail("crashes", f"{method}: {type(failure).__name__}: {failure}")
            self._drop()
            return {}
        # A connection per call: the kernel spreads them over the workers, so beta's
        # readings before and after alpha's writes come from either worker.
        self._drop()
        refusal = answer.get("error")
        if isinstance(refusal, dict) and refusal.get("code") == -32603:
            self._audit.fail("internal_errors", f"{method}: {refusal}")
        return answer

    def close(self) -> None:
        self._drop()

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


@dataclass
class _Reading:
    """What beta saw for one query."""

    hits: dict[str, list[tuple[str, float, float | None]]]  # mode → (id, score, confidence)
    version: str
    page2: list[str]
    cursor: str | None


def _hits(result: dict[str, Any]) -> list[tuple[str, float, float | None]]:
    return [
        (str(hit["id"]), round(float(hit["score"]), 9), hit.get("confidence"))
        for hit in result.get("hits", [])
    ]


def _read(beta: _Caller, query: str) -> _Reading | None:
    hits: dict[str, list[tuple[str, float, float | None]]] = {}
    version = ""
    cursor = None
    for mode in ("sparse", "hybrid", "dense"):
        answer = beta.call("retrieve", {"query": query, "k": 3, "mode": mode})
        result = answer.get("result")
        if not isinstance(result, dict):
            return None
        hits[mode] = _hits(result)
        version = str(result.get("indexVersion"))
        if mode == "hybrid":
            cursor = result.get("nextCursor")
    page2: list[str] = []
    if cursor:
        answer = beta.call("retrieve", {"query": query, "k": 3, "mode": "hybrid", "cursor": cursor})
        page2 = [hit[0] for hit in _hits(answer.get("result") or {})]
    return _Reading(hits, version, page2, cursor)


def _corpus(rng: random.Random, count: int, prefix: str) -> list[dict[str, str]]:
    return [
        {"id": f"{prefix}-{i}", "text": " ".join(rng.choices(_WORDS, k=24))} for i in range(count)
    ]


def _compare(audit: TenantAudit, query: str, before: _Reading, after: _Reading) -> None:
    for mode, hits in before.hits.items():
        audit.comparisons += 1
        if after.hits.get(mode) != hits:
            audit.fail("changed", f"{query!r} {mode}: {hits} then {after.hits.get(mode)}")
    audit.comparisons += 1
    if after.version != before.version:
        audit.fail("versions_moved", f"{query!r}: indexVersion {before.version} → {after.version}")


def _continue(audit: TenantAudit, beta: _Caller, query: str, before: _Reading) -> None:
    """Beta's pin and cursor, taken before alpha wrote, still serve exactly that."""
    pinned = {"query": query, "k": 3, "mode": "hybrid", "indexVersion": before.version}
    answer = beta.call("retrieve", pinned)
    audit.comparisons += 1
    error = answer.get("error")
    if error:
        audit.fail("expired", f"pin {before.version}: {error}")
        _screen(audit, error, {before.version})
    elif _hits(answer["result"]) != before.hits["hybrid"]:
        audit.fail("changed", f"pin {before.version} of {query!r} serves other hits")
    if before.cursor is None:
        return
    audit.comparisons += 1
    paged = {"query": query, "k": 3, "mode": "hybrid", "cursor": before.cursor}
    answer = beta.call("retrieve", paged)
    error = answer.get("error")
    if error:
        audit.fail("expired", f"cursor of {query!r}: {error}")
        _screen(audit, error, {before.version})
    elif [hit[0] for hit in _hits(answer["result"])] != before.page2:
        audit.fail("changed", f"page 2 of {query!r} changed")


_RANGE = re.compile(r"\d+\s*(\.\.|-|to)\s*\d+|servable|oldest|newest|latest version \d")


def _screen(audit: TenantAudit, error: dict[str, Any], known: set[str]) -> None:
    """An error must name no range of versions and no version the caller did not send."""
    text = json.dumps(error)
    if _RANGE.search(str(error.get("message", ""))):
        audit.fail("leaks", f"an error names a range of versions: {text}")
        return
    numbers = set(re.findall(r"\b\d+\b", str(error.get("message", ""))))
    unknown = numbers - known - {str(error.get("code", "")).lstrip("-")}
    if unknown:
        audit.fail("leaks", f"an error names versions {sorted(unknown)}: {text}")


def _probe_errors(audit: TenantAudit, beta: _Caller, alpha: _Caller, query: str) -> None:
    """Out-of-range pins and another tenant's cursor say nothing of the other tenant."""
    for pin in ("999999", "1000000000000", "-1"):
        answer = beta.call("retrieve", {"query": query, "k": 3, "indexVersion": pin})
        audit.comparisons += 1
        if "error" not in answer:
            audit.fail("leaks", f"pin {pin} served: the version exists for beta")
            continue
        _screen(audit, answer["error"], {pin.lstrip("-")})
    theirs = alpha.call("retrieve", {"query": query, "k": 1, "mode": "hybrid"}).get("result") or {}
    made_up = beta.call("retrieve", {"query": query, "k": 1, "mode": "hybrid", "cursor": "bm9wZQ"})
    cursor = theirs.get("nextCursor")
    if not cursor:
        audit.fail("leaks", "alpha got no cursor to replay")
        return
    replayed = beta.call("retrieve", {"query": query, "k": 1, "mode": "hybrid", "cursor": cursor})
    audit.comparisons += 1
    mine, fake = replayed.get("error") or {}, made_up.get("error") or {}
    if "result" in replayed:
        audit.fail("leaks", "beta paged through alpha's cursor")
    elif (mine.get("code"), mine.get("message")) != (fake.get("code"), fake.get("message")):
        audit.fail("leaks", f"alpha's cursor is refused otherwise than a made-up one: {mine}")


def _stats_version(caller: _Caller) -> str:
    answer = caller.call("x-rcpkit/stats", {})
    return str((answer.get("result") or {}).get("version"))


def run_campaign(folder: Path, plan: Plan, store: str | None = None) -> TenantAudit:
    """The campaign in ``folder`` (``store``: a PostgreSQL URL, else an embedded index)."""
    from rcpkit_bench.http import _Child

    audit = TenantAudit()
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--engine", "index", "--index", str(folder / "index"), "--embedder", EMBEDDER]
    # Two worker processes (issue 52): beta's readings come from either, as they would
    # on any multi-core machine, and must still not move.
    command += ["--create", "--workers", "2"]
    if store is not None:
        command += ["--store", store]
    env = {**os.environ, "RCPKIT_HTTP_TOKENS": f"{ALPHA}@alpha,{BETA}@beta"}
    child = _Child.spawn(command, env=env, startup=120.0)
    alpha = _Caller(child.url, ALPHA, audit)
    beta = _Caller(child.url, BETA, audit)
    try:
        rng = random.Random(11)
        beta.call("index/add", {"documents": _corpus(rng, plan.documents, "beta")})
        alpha.call("index/add", {"documents": _corpus(rng, 8, "alpha-seed")})
        queries = [" ".join(rng.choices(_WORDS, k=3)) for _ in range(plan.queries)]
        before = {query: _read(beta, query) for query in queries}
        stats = _stats_version(beta)
        for start in range(0, plan.bulk, 50):
            documents = _corpus(rng, min(50, plan.bulk - start), f"alpha-bulk{start}")
            alpha.call("index/add", {"documents": documents})
        for number in range(plan.small_writes):
            tiny = [{"id": f"alpha-tiny-{number}", "text": " ".join(rng.choices(_WORDS, k=4))}]
            alpha.call("index/add", {"documents": tiny})
        for query, reading in before.items():
            after = _read(beta, query)
            if reading is None or after is None:
                audit.fail("crashes", f"{query!r}: no result to compare")
                continue
            _compare(audit, query, reading, after)
            _continue(audit, beta, query, reading)
        audit.comparisons += 1
        if _stats_version(beta) != stats:
            audit.fail("versions_moved", f"beta's stats version moved from {stats}")
        _probe_errors(audit, beta, alpha, queries[0])
        written = beta.call("index/add", {"documents": _corpus(rng, 1, "beta-late")})
        shown = str((written.get("result") or {}).get("indexVersion"))
        audit.comparisons += 1
        if shown != str(int(stats) + 1 if stats.isdigit() else stats):
            audit.fail("versions_moved", f"beta's write got version {shown} after {stats}")
        if child.process.poll() is not None:
            audit.fail("crashes", f"the server exited ({child.process.returncode})")
    finally:
        alpha.close()
        beta.close()
        child.stop()
    return audit


def run(scale: Scale, store: str | None = None) -> list[Figure]:
    """The campaign at ``scale`` as report rows (``store``: ``postgres`` or a URL)."""
    from rcpkit.engine.store.postgres.pgserver import start_server

    started = time.monotonic()
    servers = [start_server()] if store == "postgres" else []
    try:
        with tempfile.TemporaryDirectory(prefix="rcpkit-tenants-") as folder:
            target = servers[0].url() if servers else store
            (Path(folder) / "run").mkdir()
            audit = run_campaign(Path(folder) / "run", PLANS[scale], target)
    finally:
        for server in servers:
            server.stop()
    for problem in audit.problems:
        print(f"rcpkit bench tenants: {problem}", file=sys.stderr)
    return figures(audit, time.monotonic() - started, "PostgreSQL" if store else "embedded SQLite")


def figures(audit: TenantAudit, seconds: float, backend: str = "embedded SQLite") -> list[Figure]:
    context = (
        f"{audit.requests} HTTP requests, {audit.comparisons} comparisons of what tenant beta "
        f"sees before and after tenant alpha writes; {backend}, embedder {EMBEDDER}; "
        f"{seconds:.0f} s"
    )
    rows = (
        ("tenants: requests", audit.requests, "requests"),
        ("tenants: comparisons", audit.comparisons, "checks"),
        ("tenants: scores, confidence or pages changed", audit.changed, "checks"),
        ("tenants: versions moved", audit.versions_moved, "checks"),
        ("tenants: pins or cursors expired", audit.expired, "checks"),
        ("tenants: leaks", audit.leaks, "checks"),
        ("tenants: -32603 answers", audit.internal_errors, "answers"),
        ("tenants: hangs", audit.hangs, "requests"),
        ("tenants: crashes", audit.crashes, "processes"),
    )
    return [
        Figure("tenants", name, float(value), unit, note=context if i == 0 else "")
        for i, (name, value, unit) in enumerate(rows)
    ]


_WORDS = (
    "tenant alpha beta ledger invoice quota region cluster shard replica backup audit "
    "policy contract renewal pricing discount forecast budget payroll vendor shipment"
).split()
