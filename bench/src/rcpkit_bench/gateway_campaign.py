"""``rcpkit bench gateway``: the gateway against lying engines (issue 34 campaign).

Each mode of :mod:`rcpkit_bench.lying_engine` runs in its own registry beside
one honest engine (``rcpkit serve`` over a three-note index), behind a real
``python -m rcpkit gateway`` process over stdio, and takes a few federated
``retrieve`` calls. Every call must be answered once, within the gateway's
deadline, with the honest engine's hits and well-formed ones only; an engine
that broke its answer must be named in ``_meta.degraded`` (or the notes), and
the gateway must still answer ``ping`` afterwards. Then the gateway's own
cursors are attacked over HTTP by two callers: forged, altered, replayed (the
same page again, never another) and reused for another query by the other
caller; and tenant-scoped tokens must stop the gateway at start-up, since it
forwards no tenant to its engines (a tenant's cursor or documents would reach
the other). The counts:

* requests, crashes (the gateway process gone), hangs (no answer within the
  deadline plus a second), ``-32603`` answers, wrong results (a malformed or
  duplicate id, a lying hit at rank 1, the honest engine's hits missing, a
  misbehaving engine not named, a cursor accepted that should not be), and
  leaks (a cursor of one tenant served to the other).

The campaign's own timers are generous bounds, never the measurement.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcpkit_bench.lying_engine import MODES
from rcpkit_bench.report import Figure, Scale

__all__ = ["Tally", "run"]

_ROUNDS: dict[Scale, int] = {"full": 20, "quick": 6, "smoke": 2}
DEADLINE = 4.0  # the gateway's --deadline: what every answer must beat
_ENGINE_TIMEOUT = 1.0
_QUERY = "reciprocal rank fusion"
# Engines whose answers are unusable: never fused, always named as dropped.
_BROKEN = {"wrong-ids", "non-json", "silent", "huge"}
# ... and one whose answer may land on another call in flight (an id is all the gateway
# has to go by, so that call takes it): a call left unanswered must still name it.
_DROPPED = {*_BROKEN, "other-id"}
_TOKENS = {"acme": "campaign-token-acme", "globex": "campaign-token-globex"}


@dataclass
class Tally:
    requests: int = 0
    crashes: int = 0
    hangs: int = 0
    internal: int = 0
    wrong: int = 0
    leaks: int = 0
    slowest: float = 0.0
    notes: list[str] = field(default_factory=list)

    def miss(self, kind: str, what: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.notes.append(what)


def _python() -> list[str]:
    return [sys.executable, "-m"]


_NOTES = {
    "fusion.md": "# Fusion\n\nReciprocal rank fusion merges the ranked lists of many engines.\n",
    "fruit.md": "# Fruit\n\nApples and bananas grow in orchards and plantations.\n",
    "tides.md": "# Tides\n\nThe moon's pull raises the tides twice a day.\n",
}


def _honest_index(folder: Path) -> list[str]:
    """An rcpkit index engine (it reports calibrated ``confidence``) over three notes."""
    documents = folder / "notes"
    documents.mkdir(exist_ok=True)
    for name, text in _NOTES.items():
        (documents / name).write_text(text, encoding="utf-8")
    index = ["--index", str(folder / "index"), "--embedder", "hashing:64"]
    subprocess.run(
        [*_python(), "rcpkit", "index", str(documents), *index],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [*_python(), "rcpkit", "serve", "--stdio", *index]


def _registry(folder: Path, mode: str) -> Path:
    honest = _honest_index(folder) if not (folder / "index").exists() else _serve(folder)
    liar: dict[str, Any] = {
        "id": "liar",
        "transport": "stdio",
        "command": [*_python(), "rcpkit_bench.lying_engine", mode],
        "passEnv": ["PYTHONPATH"],
    }
    if mode == "catalog-loop":
        liar["discover"] = True
    engines = [{"id": "honest", "transport": "stdio", "command": honest, "passEnv": ["PYTHONPATH"]}]
    path = folder / f"{mode}.json"
    path.write_text(json.dumps({"engines": [*engines, liar]}), encoding="utf-8")
    return path


def _serve(folder: Path) -> list[str]:
    index = ["--index", str(folder / "index"), "--embedder", "hashing:64"]
    return [*_python(), "rcpkit", "serve", "--stdio", *index]


def _gateway(registry: Path, *extra: str) -> list[str]:
    return [
        *_python(),
        "rcpkit",
        "gateway",
        str(registry),
        "--deadline",
        str(DEADLINE),
        "--engine-timeout",
        str(_ENGINE_TIMEOUT),
        "--connect-timeout",
        "20",
        *extra,
    ]


async def _mode(folder: Path, mode: str, rounds: int, tally: Tally) -> None:
    from rcpkit.client import Client
    from rcpkit.protocol.errors import RCPError

    command = _gateway(_registry(folder, mode))
    client = await Client.connect_stdio(command, pass_env=("PYTHONPATH",), connect_timeout=90)
    try:
        for _ in range(rounds):  # each round: three calls in flight at once
            await asyncio.gather(*(_one(client, mode, tally) for _ in range(3)))
            if client.closed:
                tally.miss("crashes", f"{mode}: the gateway is gone")
                return
        try:
            await client.ping(timeout=10)
        except RCPError as error:
            tally.miss("crashes", f"{mode}: no ping after the calls ({error.message})")
    finally:
        await client.close()


async def _one(client: Any, mode: str, tally: Tally) -> None:
    from rcpkit.client import CallOptions
    from rcpkit.protocol.errors import RCPError

    tally.requests += 1
    started = time.monotonic()
    try:
        result = await client.call(
            "retrieve", {"query": _QUERY, "k": 5}, CallOptions(timeout=DEADLINE + 30)
        )
    except RCPError as error:
        if not client.closed:
            kind = "internal" if error.code == -32603 else "wrong"
            tally.miss(kind, f"{mode}: [{error.code}] {error.message[:120]}")
            _timed(tally, mode, time.monotonic() - started)
        return
    _timed(tally, mode, time.monotonic() - started)
    _audit(tally, mode, result)


def _timed(tally: Tally, mode: str, seconds: float) -> None:
    tally.slowest = max(tally.slowest, seconds)
    if seconds > DEADLINE + 1.0:
        tally.miss("hangs", f"{mode}: answered after {seconds:.1f} s (deadline {DEADLINE:g} s)")


def _audit(tally: Tally, mode: str, result: dict[str, Any]) -> None:
    hits = result.get("hits") or []
    ids = [hit.get("id") for hit in hits]
    if any(isinstance(id, bool) or not isinstance(id, str | int) for id in ids):
        tally.miss("wrong", f"{mode}: a malformed id was passed on: {ids!r:.80}")
    if len(set(map(str, ids))) != len(ids):
        tally.miss("wrong", f"{mode}: duplicate ids in one result: {ids!r:.80}")
    engines = [(hit.get("meta") or {}).get("engine") for hit in hits]
    if "honest" not in engines:
        tally.miss("wrong", f"{mode}: the honest engine's hits are missing")
    if mode == "confident" and engines[:1] == ["liar"]:
        tally.miss("wrong", f"{mode}: a hit claiming 0.99 took rank 1: {ids[:1]}")
    meta = result.get("_meta") or {}
    named = any(entry.get("engine") == "liar" for entry in meta.get("degraded") or [])
    noted = any("liar" in str(note) for note in (result.get("usage") or {}).get("notes") or [])
    if mode in _BROKEN and "liar" in engines:
        tally.miss("wrong", f"{mode}: the broken answer's hits were fused in")
    if mode in _DROPPED and "liar" not in engines and not (named or noted):
        tally.miss("wrong", f"{mode}: the dropped engine is not named")


async def _cursors(folder: Path, tally: Tally) -> None:
    from rcpkit.client import Client
    from rcpkit.protocol.errors import RCPError
    from rcpkit_bench.http import _Child

    registry = _registry(folder, "duplicate-ids")
    _tenant_tokens_refused(registry, tally)
    env = {**os.environ, "RCPKIT_HTTP_TOKENS": " ".join(_TOKENS.values())}
    child = _Child.spawn(_gateway(registry, "--http", "127.0.0.1:0"), env=env, startup=90)
    try:
        acme = await Client.connect_http(child.url, token=_TOKENS["acme"])
        globex = await Client.connect_http(child.url, token=_TOKENS["globex"])
        try:
            query = {"query": _QUERY, "k": 2}
            first = await acme.call("retrieve", query)
            cursor = first.get("nextCursor")
            if not isinstance(cursor, str):
                tally.miss("wrong", "cursors: a full first page carries no nextCursor")
                return
            body, _, mac = cursor.partition(".")
            refused: Sequence[tuple[str, Any, dict[str, Any]]] = [
                ("forged", acme, {**query, "cursor": "bm90LWEtY3Vyc29y.AAAA"}),
                ("altered", acme, {**query, "cursor": f"{body}.{mac[::-1]}"}),
                ("another query", globex, {"query": "kiwis", "k": 2, "cursor": cursor}),
            ]
            for what, caller, params in refused:
                tally.requests += 1
                try:
                    await caller.call("retrieve", params)
                except RCPError as error:
                    if error.code != -32602:
                        tally.miss("wrong", f"cursor {what}: [{error.code}] {error.message}")
                    continue
                tally.miss("wrong", f"cursor {what}: accepted")
            pages = []
            for _ in range(2):  # replayed: the same page, twice
                tally.requests += 1
                page = await acme.call("retrieve", {**query, "cursor": cursor})
                pages.append([hit["id"] for hit in page["hits"]])
            if pages[0] != pages[1]:
                tally.miss("wrong", f"cursor replayed: two different pages {pages}")
        finally:
            await acme.close()
            await globex.close()
    finally:
        if child.process.poll() is not None:
            tally.miss("crashes", f"the HTTP gateway exited ({child.process.returncode})")
        child.stop()


def _tenant_tokens_refused(registry: Path, tally: Tally) -> None:
    """The gateway forwards no tenant to its engines, so tenant-scoped tokens (whose
    cursors and documents would cross between tenants) must stop it at start-up."""
    tokens = " ".join(f"{token}@{tenant}" for tenant, token in _TOKENS.items())
    env = {**os.environ, "RCPKIT_HTTP_TOKENS": tokens}
    tally.requests += 1
    try:
        done = subprocess.run(
            _gateway(registry, "--http", "127.0.0.1:0"),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=90,
            check=False,
        )
    except subprocess.TimeoutExpired:
        tally.miss("leaks", "tenant-scoped tokens: the gateway served them")
        return
    if done.returncode == 0 or b"tenant" not in done.stderr:
        tally.miss("leaks", f"tenant-scoped tokens: exit {done.returncode} without naming them")


async def campaign(scale: Scale, modes: Sequence[str] = MODES) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="rcpkit-bench-gateway-") as folder:
        for mode in modes:
            await _mode(Path(folder), mode, _ROUNDS[scale], tally)
        await _cursors(Path(folder), tally)
    return tally


def run(scale: Scale = "full") -> list[Figure]:
    from rcpkit.server.runner import run_async

    tallies: list[Tally] = []

    async def main() -> None:
        tallies.append(await campaign(scale))

    run_async(main())
    (tally,) = tallies
    for note in tally.notes:
        print(f"rcpkit bench gateway: {note}", file=sys.stderr)
    return figures(tally)


def figures(tally: Tally) -> list[Figure]:
    what = f"{len(MODES)} lying engines × retrieve, then cursor and tenant attacks over HTTP"
    failures = tally.crashes + tally.hangs + tally.internal + tally.wrong + tally.leaks
    note = "; ".join(tally.notes[:3]) or "every call answered in time, every liar named"
    return [
        Figure("gateway", f"{what}: requests", tally.requests, "requests"),
        Figure(
            "gateway",
            "crashes, hangs, -32603, wrong results, leaks",
            failures,
            "failures",
            higher_is_better=False,
            note=f"{tally.crashes}/{tally.hangs}/{tally.internal}/{tally.wrong}/{tally.leaks}; "
            + note,
        ),
        Figure(
            "gateway",
            f"slowest answer (deadline {DEADLINE:g} s)",
            round(tally.slowest, 2),
            "s",
            higher_is_better=False,
        ),
    ]
