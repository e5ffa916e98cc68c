"""``rcpkit bench race``: writers racing on one index while a server reads (issue 34).

One ``rcpkit serve --http`` on an embedded index. Against it, at once:

* two ``rcpkit index`` runs, each over its own folder of files under the index's
  source root (recorded by a first run over the whole corpus, before the race);
* HTTP writers, each sending ``index/add`` batches whose documents all carry the
  batch's marker word;
* HTTP readers, each looking a random batch's marker up (``mode: sparse``) while
  the writes go on.

Then the store is read directly and audited:

* lost: an acknowledged HTTP document, or a file of a finished ``rcpkit index``
  run, that is not live with its text;
* duplicates: an id live twice, a live chunk of a retired document;
* torn reads: a read that saw some but not all of one batch's documents, or a
  reader's ``indexVersion`` going backwards;
* versions reused: two acknowledged writes answered with the same ``indexVersion``;
* internal errors: any ``-32603``; hangs: a request unanswered in 60 s; crashes:
  the server exiting, or an ``rcpkit index`` run failing;
* leaks: temporary files left in the index folder after the server stopped.

The embedder is ``hashing:64`` (the write path is under test, not the model).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rcpkit.engine.store.sqlite.reads import LIVE_DOCUMENT_TEXTS
from rcpkit_bench.report import Figure, Scale

__all__ = ["RaceAudit", "figures", "run", "run_campaign"]

EMBEDDER = "hashing:64"
_TOKEN = "race-bench-token"
_TIMEOUT = 60.0


@dataclass(frozen=True)
class _Plan:
    files: int  # per `rcpkit index` run
    batches: int  # per HTTP writer
    documents: int  # per batch
    writers: int = 2
    readers: int = 2


_PLANS: dict[Scale, _Plan] = {
    "full": _Plan(files=600, batches=150, documents=8),
    "quick": _Plan(files=200, batches=40, documents=6),
    "smoke": _Plan(files=20, batches=4, documents=4),
}


@dataclass
class RaceAudit:
    """What the campaign counted; every field after ``reads`` must stay 0."""

    requests: int = 0
    acknowledged: int = 0  # documents: HTTP acknowledged plus files of finished runs
    reads: int = 0
    lost: int = 0
    duplicates: int = 0
    torn_reads: int = 0
    versions_reused: int = 0
    internal_errors: int = 0
    hangs: int = 0
    crashes: int = 0
    leaks: int = 0
    problems: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, counter: str, message: str) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)
            if len(self.problems) < 50:
                self.problems.append(message)

    def count(self, counter: str, by: int = 1) -> None:
        with self._lock:
            setattr(self, counter, getattr(self, counter) + by)

    @property
    def clean(self) -> bool:
        return not any(
            getattr(self, name)
            for name in (
                "lost", "duplicates", "torn_reads", "versions_reused", "internal_errors",
                "hangs", "crashes", "leaks",
            )
        )  # fmt: skip


class _Endpoint:
    """Stateless JSON POSTs to the server (one connection per thread)."""

    def __init__(self, url: str, audit: RaceAudit) -> None:
        parts = urlsplit(url)
        self._host, self._port, self._base = parts.hostname or "", parts.port, parts.path
        self._audit = audit
        self._local = threading.local()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """The JSON-RPC answer, or None when none came (counted as a hang or a crash)."""
        self._audit.count("requests")
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {_TOKEN}"}
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=_TIMEOUT)
            self._local.connection = connection
        try:
            connection.request("POST", f"{self._base}/{method}", body, headers)
            answer: dict[str, Any] = json.loads(connection.getresponse().read())
        except TimeoutError:
            self._audit.fail("hangs", f"{method}: no answer in {_TIMEOUT:.0f} s")
            self._drop()
            return None
        except (OSError, http.client.HTTPException, ValueError) as failure:
            self._audit.fail("crashes", f"{method}: {type(failure).__name__}: {failure}")
            self._drop()
            return None
        refusal = answer.get("error")
        if isinstance(refusal, dict) and refusal.get("code") == -32603:
            self._audit.fail("internal_errors", f"{method}: {refusal}")
        return answer

    def _drop(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None


@dataclass
class _Batch:
    marker: str
    documents: list[dict[str, str]]
    version: str | None = None  # the acknowledged indexVersion


@dataclass
class _Race:
    audit: RaceAudit
    endpoint: _Endpoint
    plan: _Plan
    sent: list[_Batch] = field(default_factory=list)
    writing: threading.Event = field(default_factory=threading.Event)


def _writer(race: _Race, number: int) -> None:
    rng = random.Random(number)
    for serial in range(race.plan.batches):
        marker = f"hw{number}b{serial}marker"
        documents = [
            {"id": f"{marker}-{i}", "text": f"{marker} " + " ".join(rng.choices(_WORDS, k=30))}
            for i in range(race.plan.documents)
        ]
        batch = _Batch(marker, documents)
        race.sent.append(batch)  # list.append is atomic: readers may look it up from now on
        answer = race.endpoint.call("index/add", {"documents": documents})
        if answer is not None and "result" in answer:
            batch.version = str(answer["result"].get("indexVersion"))


def _reader(race: _Race, number: int) -> None:
    rng = random.Random(1000 + number)
    newest = -1
    while race.writing.is_set():
        if not race.sent:
            race.writing.wait(0.01)  # nothing sent yet: the first batch is on its way
            continue
        batch = rng.choice(race.sent)
        params = {"query": batch.marker, "k": race.plan.documents + 5, "mode": "sparse"}
        answer = race.endpoint.call("retrieve", params)
        if answer is None or "result" not in answer:
            continue
        race.audit.count("reads")
        result = answer["result"]
        seen = {hit["chunk"]["docId"] for hit in result["hits"] if hit.get("chunk")}
        mine = {document["id"] for document in batch.documents}
        if seen & mine and not mine <= seen:
            race.audit.fail("torn_reads", f"{batch.marker}: {len(seen & mine)}/{len(mine)} seen")
        version = int(result.get("indexVersion") or -1)
        if version < newest:
            race.audit.fail("torn_reads", f"reader {number}: version {version} after {newest}")
        newest = max(newest, version)


def _index_run(folder: Path, index: Path, audit: RaceAudit) -> bool:
    command = [sys.executable, "-m", "rcpkit", "index", str(folder), "--index", str(index)]
    done = subprocess.run(
        [*command, "--embedder", EMBEDDER],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        audit.fail("crashes", f"rcpkit index {folder.name}: {done.stderr.strip()[-300:]}")
        return False
    return True


def _corpus(root: Path, plan: _Plan) -> dict[str, dict[str, str]]:
    """``seed``, ``run1`` and ``run2`` folders of files; each run's marker → text by path."""
    rng = random.Random(7)
    runs: dict[str, dict[str, str]] = {}
    for name, count in (("seed", 3), ("run1", plan.files), ("run2", plan.files)):
        (root / name).mkdir(parents=True)
        runs[name] = {}
        for i in range(count):
            text = f"{name}f{i}marker " + " ".join(rng.choices(_WORDS, k=40)) + "\n"
            (root / name / f"f{i}.md").write_text(text, encoding="utf-8")
            runs[name][f"{name}/f{i}.md"] = text
    return runs


def run_campaign(folder: Path, plan: _Plan) -> RaceAudit:
    """The race in ``folder``: its audit."""
    from rcpkit_bench.http import _Child

    audit = RaceAudit()
    index, corpus = folder / "index", folder / "corpus"
    runs = _corpus(corpus, plan)
    if not _index_run(corpus, index, audit):  # records the source root before the race
        return audit
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--engine", "index", "--index", str(index), "--embedder", EMBEDDER]
    child = _Child.spawn(command, env={**os.environ, "RCPKIT_HTTP_TOKENS": _TOKEN})
    finished: dict[str, bool] = {}
    try:
        race = _Race(audit, _Endpoint(child.url, audit), plan)
        race.writing.set()
        threads = [
            threading.Thread(target=_writer, args=(race, n)) for n in range(plan.writers)
        ] + [
            threading.Thread(
                target=lambda name=name: finished.__setitem__(
                    name, _index_run(corpus / name, index, audit)
                )
            )
            for name in ("run1", "run2")
        ]
        readers = [threading.Thread(target=_reader, args=(race, n)) for n in range(plan.readers)]
        for thread in [*threads, *readers]:
            thread.start()
        for thread in threads:
            thread.join()
        race.writing.clear()
        for thread in readers:
            thread.join()
        if child.process.poll() is not None:
            audit.fail("crashes", f"the server exited ({child.process.returncode})")
    finally:
        child.stop()
    _audit_store(index, race, runs, finished)
    leftovers = [p.name for p in index.iterdir() if p.name.endswith((".tmp", "-journal"))]
    for name in leftovers:
        audit.fail("leaks", f"left in the index folder: {name}")
    return audit


def _audit_store(
    index: Path, race: _Race, runs: dict[str, dict[str, str]], finished: dict[str, bool]
) -> None:
    audit = race.audit
    with closing(sqlite3.connect(index / "index.sqlite3", timeout=30)) as connection:
        live = dict(connection.execute(LIVE_DOCUMENT_TEXTS))
        from rcpkit_bench.crash import CrashAudit, _duplicates

        twice = CrashAudit()
        _duplicates(connection, twice)
    for problem in twice.problems:
        audit.fail("duplicates", problem)
    versions: dict[str, str] = {}
    for batch in race.sent:
        if batch.version is None:
            continue
        if batch.version in versions:
            audit.fail("versions_reused", f"{batch.marker} and {versions[batch.version]}")
        versions[batch.version] = batch.marker
        for document in batch.documents:
            audit.count("acknowledged")
            if live.get(document["id"]) != document["text"]:
                audit.fail("lost", f"acknowledged {document['id']} is not live")
    for name, files in runs.items():
        if name != "seed" and not finished.get(name):
            continue
        for path, text in files.items():
            audit.count("acknowledged")
            if live.get(path, "").strip() != text.strip():
                audit.fail("lost", f"{path} of a finished rcpkit index run is not live")


def run(scale: Scale) -> list[Figure]:
    """The race at ``scale`` as report rows."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rcpkit-race-") as folder:
        audit = run_campaign(Path(folder), _PLANS[scale])
    for problem in audit.problems:
        print(f"rcpkit bench race: {problem}", file=sys.stderr)
    return figures(audit, time.monotonic() - started)


def figures(audit: RaceAudit, seconds: float) -> list[Figure]:
    context = (
        f"{audit.requests} HTTP requests ({audit.reads} reads audited), "
        f"{audit.acknowledged} documents acknowledged; embedder {EMBEDDER}; {seconds:.0f} s"
    )
    rows = (
        ("race: requests", audit.requests, "requests"),
        ("race: acknowledged documents lost", audit.lost, "docs"),
        ("race: duplicate documents or chunks", audit.duplicates, "docs"),
        ("race: torn reads", audit.torn_reads, "reads"),
        ("race: versions reused", audit.versions_reused, "writes"),
        ("race: -32603 answers", audit.internal_errors, "answers"),
        ("race: hangs", audit.hangs, "requests"),
        ("race: crashes", audit.crashes, "processes"),
        ("race: leaks", audit.leaks, "files"),
    )
    return [
        Figure("race", name, float(value), unit, note=context if i == 0 else "")
        for i, (name, value, unit) in enumerate(rows)
    ]


_WORDS = (
    "index writer reader race commit version mirror posting chunk snapshot wal lock "
    "sqlite journal batch marker retrieve sparse dense hybrid cache follow replay"
).split()
