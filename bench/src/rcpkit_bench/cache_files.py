"""``rcpkit bench cache``: damaged cache files beside an index, then a restart (issue 34).

An embedded index keeps two head starts beside ``index.sqlite3``: the mirror
(``index.mirror``) and the ANN graph (``index.usearch`` with its
``index.usearch.json``). SQLite is the system of record; these files may be
lost or damaged while the server is down, and the next server must notice,
rebuild from SQLite, and answer exactly as a fresh index would.

Three indexes are built through ``rcpkit serve --stdio``, with a dense policy
that builds and uses the graph from 100 rows: ``A``; ``B``, an independent
index; and ``C``, a copy of ``A`` that then took other writes (same identity,
same version number, its newest row alike). Each trial copies ``A`` with its
warm caches, damages one file (bytes flipped at random, truncated, emptied, or
swapped with ``B``'s or ``C``'s), starts a server on it and runs a query set:

* wrong results: a sparse top-10 whose ids or scores differ from those of a
  fresh copy of ``A`` (SQLite alone, no cache); a dense hit whose score is not its
  exact score, or a dense top-10 sharing fewer than 8 ids with the exact one;
* not rebuilt: a damaged ``index.mirror`` still byte-identical after the server stopped;
* crashes, hangs (no answer in 60 s), ``-32603`` answers;
* leaks: temporary files left in the index folder.
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcpkit_bench.crash import _Server
from rcpkit_bench.report import Figure, Scale

__all__ = ["CacheAudit", "figures", "run", "run_campaign"]

_ROUNDS: dict[Scale, int] = {"full": 6, "quick": 2, "smoke": 1}  # trials per damage
_DOCUMENTS = 300
_QUERIES = 12
_GRAPH_WAIT = 90.0  # seconds the warm-up waits for the graph to be saved
_CONFIG = "[engine]\ndense_policy = { ann_min_size = 100, ann_max_cost = 1000.0 }\n"
_WORDS = (
    "mirror posting graph vector cache restart rebuild sqlite version stamp identity "
    "truncated corrupt swapped index fresh exact approximate neighbour query answer "
    "document chunk section trailer header checksum offset length row key tenant"
).split()
_CACHE_FILES = ("index.mirror", "index.usearch", "index.usearch.json")


@dataclass
class CacheAudit:
    """What the campaign counted; every field after ``requests`` must stay 0."""

    trials: int = 0
    requests: int = 0
    wrong_results: int = 0
    not_rebuilt: int = 0
    crashes: int = 0
    hangs: int = 0
    internal_errors: int = 0
    leaks: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, counter: str, message: str) -> None:
        setattr(self, counter, getattr(self, counter) + 1)
        if len(self.problems) < 50:
            self.problems.append(message)

    @property
    def clean(self) -> bool:
        counters = (
            self.wrong_results, self.not_rebuilt, self.crashes, self.hangs,
            self.internal_errors, self.leaks,
        )  # fmt: skip
        return not any(counters)


Damage = Callable[[Path, random.Random, dict[str, Path]], None]


def _flip(name: str) -> Damage:
    def damage(index: Path, rng: random.Random, others: dict[str, Path]) -> None:
        path = index / name
        data = bytearray(path.read_bytes())
        for _ in range(8):
            at = rng.randrange(len(data))
            data[at] ^= 1 + rng.randrange(255)
        path.write_bytes(bytes(data))

    return damage


def _truncate(name: str) -> Damage:
    def damage(index: Path, rng: random.Random, others: dict[str, Path]) -> None:
        path = index / name
        size = path.stat().st_size
        with path.open("r+b") as file:
            file.truncate(rng.randrange(size) if size else 0)

    return damage


def _empty(name: str) -> Damage:
    def damage(index: Path, rng: random.Random, others: dict[str, Path]) -> None:
        (index / name).write_bytes(b"")

    return damage


def _swap(names: tuple[str, ...], other: str) -> Damage:
    def damage(index: Path, rng: random.Random, others: dict[str, Path]) -> None:
        for name in names:
            shutil.copyfile(others[other] / name, index / name)

    return damage


_GRAPH = ("index.usearch", "index.usearch.json")
DAMAGES: dict[str, Damage] = {
    "mirror: bytes flipped": _flip("index.mirror"),
    "mirror: truncated": _truncate("index.mirror"),
    "mirror: emptied": _empty("index.mirror"),
    "mirror: another index's": _swap(("index.mirror",), "B"),
    "mirror: a diverged copy's": _swap(("index.mirror",), "C"),
    "graph: bytes flipped": _flip("index.usearch"),
    "graph: truncated": _truncate("index.usearch"),
    "graph: record emptied": _empty("index.usearch.json"),
    "graph: another index's": _swap(_GRAPH, "B"),
    "graph: a diverged copy's": _swap(_GRAPH, "C"),
}


def _documents(rng: random.Random, prefix: str, count: int) -> list[dict[str, str]]:
    return [
        {"id": f"{prefix}{i}", "text": " ".join(rng.choices(_WORDS, k=rng.randint(8, 40)))}
        for i in range(count)
    ]


def _add(server: _Server, documents: list[dict[str, str]]) -> None:
    for start in range(0, len(documents), 100):
        reply = server.call("index/add", {"documents": documents[start : start + 100]})
        if "result" not in reply:
            raise RuntimeError(f"index/add failed while building: {reply}")


def _start(index: Path, log: Any, config: Path | None, *, create: bool = False) -> _Server:
    extra = ("--config", str(config)) if config is not None else ()
    server = _Server(index, log, create=create, extra=extra)
    hello = server.call("initialize", {"protocolVersion": 1})
    if "result" not in hello:
        raise RuntimeError(f"initialize failed: {hello}")
    return server


def _warm(index: Path, log: Any, config: Path, queries: list[str]) -> None:
    """Serve ``index`` until its graph is saved (queries calibrate it), then stop: caches."""
    server = _start(index, log, config)
    deadline = time.monotonic() + _GRAPH_WAIT
    while not (index / "index.usearch").is_file() and time.monotonic() < deadline:
        for query in queries:  # the calibration measures the queries the index received
            server.call("retrieve", {"query": query, "k": 10, "mode": "dense"})
    server.shutdown()
    missing = [name for name in _CACHE_FILES if not (index / name).is_file()]
    if missing:
        raise RuntimeError(f"{index.name}: no {', '.join(missing)} after warming")


def _build(folder: Path, log: Any, config: Path, queries: list[str]) -> dict[str, Path]:
    rng = random.Random(20261203)
    a, b, c = folder / "A", folder / "B", folder / "C"
    server = _start(a, log, config, create=True)
    _add(server, _documents(rng, "a", _DOCUMENTS))
    server.shutdown()
    shutil.copytree(a, c)  # C: A's copy (its identity too), then other writes
    common = {"id": "last", "text": "the same newest document in both copies"}
    for index, prefix in ((a, "x"), (c, "y")):
        server = _start(index, log, config)
        _add(server, [*_documents(rng, prefix, 20), common])
        server.shutdown()
    server = _start(b, log, config, create=True)
    _add(server, _documents(rng, "b", _DOCUMENTS))
    server.shutdown()
    for index in (a, b, c):
        _warm(index, log, config, queries)
    return {"A": a, "B": b, "C": c}


def _answers(server: _Server, queries: list[str], audit: CacheAudit) -> list[Any] | None:
    """Each query's sparse and dense hits as (id, score), or None when the server failed."""
    out: list[Any] = []
    for query in queries:
        for mode in ("sparse", "dense"):
            audit.requests += 1
            try:
                reply = server.call("retrieve", {"query": query, "k": 10, "mode": mode})
            except TimeoutError as error:
                audit.fail("hangs", str(error))
                return None
            except RuntimeError as error:
                audit.fail("crashes", str(error))
                return None
            if "result" not in reply:
                if reply.get("error", {}).get("code") == -32603:
                    audit.fail("internal_errors", f"{mode} {query!r}: {reply['error']}")
                out.append(None)
                continue
            out.append([(hit["id"], float(hit["score"])) for hit in reply["result"]["hits"]])
    return out


def _compare(name: str, got: list[Any], fresh: list[Any], audit: CacheAudit) -> None:
    for position, (mine, reference) in enumerate(zip(got, fresh, strict=True)):
        sparse = position % 2 == 0
        if mine is None or reference is None:
            if mine != reference:
                audit.fail("wrong_results", f"{name}: answer {position} differs in kind")
            continue
        if sparse:
            same = [m[0] for m in mine] == [r[0] for r in reference] and all(
                abs(m[1] - r[1]) <= 1e-5 for m, r in zip(mine, reference, strict=True)
            )
            if not same:
                audit.fail("wrong_results", f"{name}: sparse answer {position // 2} differs")
            continue
        exact = dict(reference)
        floor = min(exact.values(), default=0.0)
        shared = [hit for hit, _ in mine if hit in exact]
        wrong = [
            hit
            for hit, score in mine
            if (hit in exact and abs(score - exact[hit]) > 1e-4)
            or (hit not in exact and score > floor + 1e-4)
        ]
        if wrong or len(shared) < min(8, len(exact)):
            audit.fail(
                "wrong_results",
                f"{name}: dense answer {position // 2}: {len(shared)} of the exact ids, "
                f"{len(wrong)} hits scored otherwise than exactly",
            )


def _trial(
    name: str,
    damage: Damage,
    built: dict[str, Path],
    fresh: list[Any],
    rng: random.Random,
    context: tuple[CacheAudit, Path, Any, Path, list[str]],
) -> None:
    audit, folder, log, config, queries = context
    index = folder / f"trial-{audit.trials}"
    shutil.copytree(built["A"], index)
    damage(index, rng, built)
    damaged = {n: (index / n).read_bytes() for n in _CACHE_FILES if (index / n).is_file()}
    audit.trials += 1
    try:
        server = _start(index, log, config)
    except (RuntimeError, TimeoutError, OSError, ValueError) as error:
        audit.fail("crashes", f"{name}: the server did not start: {error}")
        return
    got = _answers(server, queries, audit)
    if got is None:
        server.kill()
        return
    _compare(name, got, fresh, audit)
    try:
        server.shutdown()
    except (RuntimeError, TimeoutError, OSError) as error:
        audit.fail("crashes", f"{name}: shutdown: {error}")
        return
    mirror = index / "index.mirror"
    damaged_mirror = damaged.get("index.mirror")
    if name.startswith("mirror") and mirror.is_file() and mirror.read_bytes() == damaged_mirror:
        audit.fail("not_rebuilt", f"{name}: index.mirror is still the damaged file")
    for path in index.iterdir():
        if path.name.endswith(".tmp"):
            audit.fail("leaks", f"{name}: left {path.name}")
    shutil.rmtree(index, ignore_errors=True)


def run_campaign(folder: Path, rounds: int, seed: int = 20261203) -> CacheAudit:
    """``rounds`` trials of every damage in ``DAMAGES``, in ``folder``: the audit."""
    audit = CacheAudit()
    rng = random.Random(seed)
    queries = [" ".join(rng.choices(_WORDS, k=3)) for _ in range(_QUERIES)]
    config = folder / "rcpkit.toml"
    config.write_text(_CONFIG, encoding="utf-8")
    with (folder / "servers.log").open("wb") as log:
        built = _build(folder, log, config, queries)
        reference = folder / "fresh"
        reference.mkdir()
        for path in built["A"].iterdir():
            if path.name.startswith("index.sqlite3"):
                shutil.copyfile(path, reference / path.name)
        server = _start(reference, log, None)  # SQLite alone, exact search
        fresh = _answers(server, queries, audit)
        server.shutdown()
        if fresh is None:
            raise RuntimeError("the fresh copy did not answer")
        for _ in range(rounds):
            for name, damage in DAMAGES.items():
                _trial(name, damage, built, fresh, rng, (audit, folder, log, config, queries))
    return audit


def run(scale: Scale) -> list[Figure]:
    """The campaign at ``scale`` as report rows."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rcpkit-cache-") as folder:
        audit = run_campaign(Path(folder), _ROUNDS[scale])
    for problem in audit.problems:
        print(f"rcpkit bench cache: {problem}", file=sys.stderr)
    return figures(audit, time.monotonic() - started)


def figures(audit: CacheAudit, seconds: float) -> list[Figure]:
    context = (
        f"{audit.trials} restarts over {len(DAMAGES)} kinds of damage, "
        f"{audit.requests} retrieves compared with a fresh copy; {seconds:.0f} s"
    )
    rows = (
        ("cache: restarts on a damaged cache file", audit.trials, "restarts"),
        ("cache: wrong results", audit.wrong_results, "answers"),
        ("cache: damaged mirror not rebuilt", audit.not_rebuilt, "restarts"),
        ("cache: crashes", audit.crashes, "restarts"),
        ("cache: hangs", audit.hangs, "requests"),
        ("cache: -32603 answers", audit.internal_errors, "answers"),
        ("cache: leaks", audit.leaks, "files"),
    )
    return [
        Figure("cache", name, float(value), unit, note=context if i == 0 else "")
        for i, (name, value, unit) in enumerate(rows)
    ]
