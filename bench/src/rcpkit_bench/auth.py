"""Campaign R4, auth and tenants: ``rcpkit serve --http`` with two tenant-scoped tokens.

Against the real CLI server (the persistent engine, tenant-aware, with the
deterministic hashing embedder and the regex graph, in a temporary folder,
two worker processes, so a tenant's calls land on either):

1. refusals: every RCP method (and an unknown one, a GET, an OPTIONS, a
   path outside the base) under every credential attack — none, a wrong
   token, another scheme, an empty bearer, a near miss, a cookie, a second
   ``Authorization`` header (bad then good, good then bad), two API keys, a
   bearer and an API key at once; also a token in ``params``/``_meta`` —
   must be HTTP 401/403 with a ``-32012`` body, and all of them the same body.
2. tenants: ``acme`` writes marked documents; ``globex`` then tries to reach
   them through retrieve (every mode), filters, acme's cursor, acme's
   session id, ids (delete, overwrite), feedback (a poison report),
   memory (acme's memory id), graph (every op, acme's ids as seeds) and
   embed. A hit is any answer to globex that carries acme's marker; an
   effect is any change acme can then see. Both must be 0.

    rcpkit bench auth [--quick|--smoke]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from rcpkit_bench.http import _Child
from rcpkit_bench.report import Figure, Scale

__all__ = ["run"]

_TOKENS = {"acme": "acme-bench-token", "globex": "globex-bench-token"}
_MARK = "acmeonly"  # in every acme document's text, id and tag, nowhere else
_DOCUMENTS = {"full": 40, "quick": 20, "smoke": 6}

# Every method of RCP/1 (§7), params that would be valid once authenticated.
_METHODS: dict[str, dict[str, Any]] = {
    "initialize": {"protocolVersion": 1},
    "info": {},
    "ping": {},
    "shutdown": {},
    "embed": {"inputs": ["x"]},
    "embed/sparse": {"inputs": ["x"]},
    "embed/multi": {"inputs": ["x"]},
    "rerank": {"query": "x", "documents": [{"id": "a", "text": "x"}]},
    "retrieve": {"query": "x"},
    "query/transform": {"query": "x", "method": "rewrite"},
    "graph": {"op": "local", "query": "x"},
    "index/add": {"documents": [{"id": "probe", "text": "probe"}]},
    "index/delete": {"ids": ["probe"]},
    "catalog/list": {},
    "feedback": {"signals": [{"hitId": "a", "poisonSuspected": True}]},
    "memory/build": {},
    "memory/recall": {"query": "x"},
    "x-vendor/anything": {},
    "frobnicate": {},
}

_ATTACKS: dict[str, list[tuple[str, str]]] = {
    "no credentials": [],
    "a wrong bearer token": [("authorization", "Bearer not-a-token")],
    "the right token under another scheme": [("authorization", "Basic acme-bench-token")],
    "a bearer without a token": [("authorization", "Bearer")],
    "a wrong API key": [("x-api-key", "not-a-token")],
    "bad then good Authorization": [
        ("authorization", "Bearer not-a-token"),
        ("authorization", "Bearer acme-bench-token"),
    ],
    "good then bad Authorization": [
        ("authorization", "Bearer acme-bench-token"),
        ("authorization", "Bearer not-a-token"),
    ],
    "a lowercase scheme, a wrong token": [("authorization", "bearer not-a-token")],
    "the right token with a suffix": [("authorization", "Bearer acme-bench-tokenX")],
    "a prefix of the right token": [("authorization", "Bearer acme-bench-toke")],
    "an empty API key": [("x-api-key", "")],
    "two API keys, bad then good": [("x-api-key", "nope"), ("x-api-key", "acme-bench-token")],
    "the token in a cookie": [("cookie", "token=acme-bench-token; session=acme-bench-token")],
    "a bearer and an API key at once": [
        ("authorization", "Bearer acme-bench-token"),
        ("x-api-key", "globex-bench-token"),
    ],
}


# --- the server ---


@contextmanager
def _server(folder: str) -> Iterator[_Child]:
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0"]
    command += ["--engine", "index", "--index", folder, "--create", "--embedder", "hashing:256"]
    # Two worker processes (issue 52): tenants must hold whichever worker answers.
    command += ["--graph", "regex", "--workers", "2"]
    tokens = " ".join(f"{token}@{tenant}" for tenant, token in _TOKENS.items())
    child = _Child.spawn(command, env={**os.environ, "RCPKIT_HTTP_TOKENS": tokens})
    try:
        yield child
    finally:
        child.stop()


class _Tenant:
    def __init__(self, url: str, tenant: str) -> None:
        self.url = url
        # A connection per call: the kernel spreads them over the workers, so a tenant's
        # writes and its reads (and the other tenant's attempts) meet on either.
        self.http = httpx.Client(
            timeout=60.0,
            headers={"authorization": f"Bearer {_TOKENS[tenant]}"},
            limits=httpx.Limits(max_keepalive_connections=0),
        )
        self._id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        body = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        answer: dict[str, Any] = self.http.post(f"{self.url}/{method}", json=body).json()
        return answer

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.call(method, params)
        if "result" not in answer:
            raise RuntimeError(f"{method} failed for a legitimate caller: {answer}")
        result: dict[str, Any] = answer["result"]
        return result


# --- 1. refusals ---


@dataclass
class _Refusals:
    attempts: int = 0
    refused: int = 0
    bodies: set[bytes] = field(default_factory=set)
    misses: list[str] = field(default_factory=list)


def _refusals(url: str) -> _Refusals:
    tally = _Refusals()
    root = url.rsplit("/", 1)[0]
    with httpx.Client(timeout=30.0) as http:
        for attack, headers in _ATTACKS.items():
            for method, params in _METHODS.items():
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                _tally(
                    tally,
                    f"{attack}: {method}",
                    http.post(f"{url}/{method}", json=body, headers=headers),
                )
            for what, request in (
                ("GET", http.build_request("GET", f"{url}/ping", headers=headers)),
                ("OPTIONS", http.build_request("OPTIONS", f"{url}/ping", headers=headers)),
                ("outside the base", http.build_request("POST", f"{root}/x", headers=headers)),
            ):
                _tally(tally, f"{attack}: {what}", http.send(request))
        for smuggled in ({"token": _TOKENS["acme"]}, {"_meta": {"authorization": _TOKENS["acme"]}}):
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "retrieve",
                "params": {"query": "x", **smuggled},
            }
            _tally(tally, "token in params", http.post(f"{url}/retrieve", json=body))
    return tally


def _tally(tally: _Refusals, label: str, response: httpx.Response) -> None:
    tally.attempts += 1
    try:
        code = response.json()["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    if response.status_code in (401, 403) and code == -32012:
        tally.refused += 1
        tally.bodies.add(response.content)
    else:
        tally.misses.append(f"{label} → {response.status_code}")


# --- 2. tenants ---


@dataclass
class _Probes:
    probes: int = 0
    hits: list[str] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)
    rescored: int = 0  # acme hits whose score moved after globex's writes

    def look(self, label: str, answer: Any) -> None:
        """One globex probe: any trace of acme's marker in its answer is a hit."""
        self.probes += 1
        if _MARK in json.dumps(answer):
            self.hits.append(label)


def _acme_documents(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{_MARK}-doc-{n}",
            "text": f"{_MARK} confidential merger plan {n} zebra quokka harbour",
            "meta": {"tag": f"{_MARK}-red", "lang": "en", "year": 2020 + n % 5},
        }
        for n in range(count)
    ]


def _globex_documents(count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"globex-doc-{n}",
            "text": f"globex public roadmap {n} zebra quokka harbour",
            "meta": {"tag": "globex-blue", "lang": "en", "year": 2020 + n % 5},
        }
        for n in range(count)
    ]


def _tenants(url: str, count: int) -> _Probes:
    acme, globex = _Tenant(url, "acme"), _Tenant(url, "globex")
    probes = _Probes()
    try:
        acme.result("index/add", {"documents": _acme_documents(count)})
        globex.result("index/add", {"documents": _globex_documents(count)})
        secret = f"{_MARK} confidential merger plan"
        _reads(acme, globex, probes, secret)
        _writes(acme, globex, probes, count)
        _memory_and_graph(acme, globex, probes, secret)
    finally:
        acme.http.close()
        globex.http.close()
    return probes


def _reads(acme: _Tenant, globex: _Tenant, probes: _Probes, secret: str) -> None:
    for mode in ("dense", "sparse", "hybrid"):
        params = {"query": secret, "k": 20, "mode": mode}
        probes.look(f"retrieve ({mode})", globex.call("retrieve", params))
    for filter in (
        {"field": "tag", "op": "eq", "value": f"{_MARK}-red"},
        {"field": "tag", "op": "in", "value": [f"{_MARK}-red", "globex-blue"]},
        {"field": "tag", "op": "ne", "value": "globex-blue"},
        {"field": "year", "op": "gte", "value": 2000},
        {"field": "tag", "op": "exists"},
    ):
        params = {"query": secret, "k": 20, "filter": filter}
        probes.look(f"retrieve filter {filter['op']}", globex.call("retrieve", params))
    first = acme.result("retrieve", {"query": "zebra quokka", "k": 2, "mode": "sparse"})
    cursor = first.get("nextCursor")
    if cursor is not None:  # acme's cursor in globex's hands
        params = {"query": "zebra quokka", "k": 2, "mode": "sparse", "cursor": cursor}
        probes.look("retrieve with acme's cursor", globex.call("retrieve", params))
    acme.result("retrieve", {"query": secret, "k": 5, "sessionId": "shared-session"})
    params = {"query": secret, "k": 20, "sessionId": "shared-session"}
    probes.look("retrieve in acme's sessionId", globex.call("retrieve", params))
    probes.look("embed", globex.call("embed", {"inputs": [secret]}))
    probes.look(
        "query/transform",
        globex.call("query/transform", {"query": "merger", "method": "multi-query"}),
    )


def _writes(acme: _Tenant, globex: _Tenant, probes: _Probes, count: int) -> None:
    ids = [f"{_MARK}-doc-{n}" for n in range(count)]
    before = _owner_view(acme, count)
    deleted = globex.call("index/delete", {"ids": ids})
    probes.look("index/delete of acme's ids", deleted)
    if deleted.get("result", {}).get("deleted", 0):
        probes.effects.append(f"globex deleted {deleted['result']['deleted']} documents")
    # Overwriting acme's id: the answer echoes globex's own id, so it is no probe;
    # what counts is whether acme's document changed.
    overwrite = [{"id": ids[0], "text": "globex overwrite attempt"}]
    globex.call("index/add", {"documents": overwrite})
    signals = [{"hitId": id, "poisonSuspected": True, "helpful": False} for id in ids]
    probes.look("feedback on acme's ids", globex.call("feedback", {"signals": signals}))
    after = _owner_view(acme, count)
    changed = sorted(set(before) ^ set(after))
    if changed:
        probes.effects.append(f"acme's own view changed: {changed[:3]}")
    probes.rescored = sum(before[key] != score for key, score in after.items() if key in before)


def _owner_view(acme: _Tenant, count: int) -> dict[str, float]:
    """What acme retrieves of its own documents: (id, text, trust) → score."""
    params = {"query": "confidential merger plan", "k": count, "mode": "sparse"}
    hits = acme.result("retrieve", params)["hits"]
    return {
        json.dumps([hit["id"], hit.get("text"), hit.get("trust")]): float(hit["score"])
        for hit in hits
    }


def _memory_and_graph(acme: _Tenant, globex: _Tenant, probes: _Probes, secret: str) -> None:
    memory = acme.result("memory/build", {"scope": "global"})
    for params in (
        {"query": secret, "memoryId": memory["memoryId"]},
        {"query": secret},
    ):
        probes.look("memory/recall", globex.call("memory/recall", params))
    probes.look("memory/build", globex.call("memory/build", {"scope": "global"}))
    for op in ("local", "global", "drift", "communities"):
        probes.look(f"graph {op}", globex.call("graph", {"op": op, "query": secret}))
    seeds = {"op": "neighbors", "seedIds": [f"{_MARK}-doc-0"], "hops": 2}
    probes.look("graph neighbors from acme's ids", globex.call("graph", seeds))


# --- the run ---


def run(scale: Scale = "full") -> list[Figure]:
    with (
        tempfile.TemporaryDirectory(prefix="rcpkit-bench-auth-") as folder,
        _server(os.path.join(folder, "index")) as child,
    ):
        refusals = _refusals(child.url)
        probes = _tenants(child.url, _DOCUMENTS[scale])
    return _figures(refusals, probes)


def _figures(refusals: _Refusals, probes: _Probes) -> list[Figure]:
    attacks = f"{len(_ATTACKS)} credential attacks × {len(_METHODS) + 3} methods and verbs"
    return [
        Figure(
            "auth",
            f"{attacks} (+ tokens in params): refused 401/403 with -32012",
            refusals.refused,
            "requests",
            "requests made",
            refusals.attempts,
            target=1.0,
            note=f"{len(refusals.bodies)} distinct refusal bodies; "
            + ("; ".join(refusals.misses[:3]) or "no request got through"),
        ),
        Figure(
            "auth",
            f"cross-tenant hits in {probes.probes} probes by another tenant",
            len(probes.hits),
            "probes",
            higher_is_better=False,
            note="; ".join(probes.hits[:4])
            or "retrieve ×3 modes, filters ×5, cursor, sessionId, ids, feedback, memory, "
            "graph ×5, embed, transform",
        ),
        Figure(
            "auth",
            "cross-tenant effects seen by the owner afterwards",
            len(probes.effects),
            "effects",
            higher_is_better=False,
            note="; ".join(probes.effects) or "no delete, overwrite or quarantine crossed over",
        ),
        Figure(
            "auth",
            "owner's sparse hits whose score moved after another tenant's writes",
            probes.rescored,
            "hits",
            higher_is_better=False,
            note=(
                "the same documents, text and trust; BM25 scores moved, so corpus statistics "
                "cross tenants (a side channel, not a hit)"
                if probes.rescored
                else "BM25's corpus statistics are per tenant: no score of the owner's moved"
            ),
        ),
    ]
