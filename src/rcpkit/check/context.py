"""What every check shares: the peer, the handshake's results, and small probing helpers."""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from rcpkit.check.failures import Failed, Skipped
from rcpkit.check.peer import Exchange, Peer, same_id

__all__ = ["Context", "Probe", "describe"]

# The methods that count as a retrieval capability (§14.1 item 2), in probing order.
RETRIEVAL = ("retrieve", "embed", "rerank", "graph")


@dataclass(frozen=True, slots=True)
class Probe:
    """A call the server can certainly take, and a malformed variant of it."""

    method: str
    valid: dict[str, Any]
    malformed: dict[str, Any]


def describe(reply: Any) -> str:
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        error = reply["error"]
        return f"error {error.get('code')} ({error.get('message')!s:.80})"
    if isinstance(reply, dict) and "result" in reply:
        return f"result {str(reply['result'])[:80]}"
    return str(reply)[:100]


@dataclass(slots=True)
class Context:
    peer: Peer
    query: str = "retrieval"
    timeout: float = 10.0
    info_before: dict[str, Any] | None = None
    init: dict[str, Any] | None = None
    stateless: bool = False
    declared: str | None = None
    baseline: list[dict[str, Any]] | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    # --- what the server advertised ---

    @property
    def capabilities(self) -> dict[str, Any]:
        source = self.init or self.info_before or {}
        caps = source.get("capabilities")
        return caps if isinstance(caps, dict) else {}

    def has(self, key: str) -> bool:
        return key in self.capabilities

    def cap(self, key: str) -> dict[str, Any]:
        value = self.capabilities.get(key)
        return value if isinstance(value, dict) else {}

    def listed(self, key: str, field: str) -> list[Any]:
        value = self.cap(key).get(field)
        return value if isinstance(value, list) else []

    def require(self, key: str) -> None:
        if not self.has(key):
            raise Skipped(f"`{key}` is not advertised")

    def probe(self) -> Probe:
        """A valid and a malformed call to an advertised retrieval method."""
        q = self.query
        for method in RETRIEVAL:
            if not self.has(method) and self.capabilities:
                continue
            if method == "retrieve":
                return Probe(method, {"query": q, "k": 3}, {"query": q, "k": -1})
            if method == "embed":
                return Probe(method, {"inputs": ["hello"]}, {"inputs": "hello"})
            if method == "rerank":
                return Probe(method, {"query": q, "passages": ["a", "b"]}, {"passages": ["a"]})
            ops = self.listed("graph", "ops") or ["local"]
            return Probe(method, {"op": ops[0], "query": q}, {"op": 7})
        return Probe("retrieve", {"query": q, "k": 3}, {"query": q, "k": -1})

    # --- calls ---

    def new_id(self) -> str:
        return f"rcpcheck-{next(self._ids)}"

    async def send(self, message: Any, **options: Any) -> Exchange:
        options.setdefault("timeout", self.timeout)
        return await self.peer.send(message, **options)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        """One request; its response (checked to echo our id)."""
        id = options.pop("id", None) or self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        reply = (await self.send(message, **options)).only()
        if not isinstance(reply, dict) or not same_id(reply.get("id"), id):
            raise Failed(f"{method}: the answer does not echo id {id!r}: {describe(reply)}")
        return reply

    async def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        reply = await self.call(method, params)
        if "result" not in reply:
            raise Failed(f"{method} failed: {describe(reply)}")
        return reply["result"]

    async def error(
        self, method: str, params: dict[str, Any] | None, codes: Collection[int]
    ) -> dict[str, Any]:
        reply = await self.call(method, params)
        expect_error(reply, codes, method)
        return reply

    async def hits(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``retrieve`` hits, checked to be well-formed (§7.7)."""
        result = await self.result("retrieve", params)
        hits = result.get("hits") if isinstance(result, dict) else None
        if not isinstance(hits, list):
            raise Failed(f"retrieve result has no `hits` array: {str(result)[:80]}")
        for hit in hits:
            check_hit(hit)
        return hits

    async def baseline_hits(self) -> list[dict[str, Any]]:
        if self.baseline is None:
            self.baseline = await self.hits({"query": self.query, "k": 5})
        return self.baseline


def expect_error(reply: Any, codes: Collection[int], what: str) -> int:
    error = reply.get("error") if isinstance(reply, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int) or code not in codes:
        wanted = " or ".join(str(c) for c in codes)
        raise Failed(f"{what}: expected error {wanted}, got {describe(reply)}")
    return code


def check_hit(hit: Any) -> None:
    if not isinstance(hit, dict):
        raise Failed(f"a hit is not an object: {hit!r:.60}")
    id = hit.get("id")
    if isinstance(id, bool) or not isinstance(id, str | int | float):
        raise Failed(f"a hit id must be a string or number: {id!r:.60}")
    score = hit.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise Failed(f"hit {id!r} has no finite numeric score: {score!r:.40}")


def scores_descend(hits: list[dict[str, Any]]) -> None:
    scores = [float(hit["score"]) for hit in hits]
    for before, after in itertools.pairwise(scores):
        if after > before + 1e-9:
            raise Failed(f"scores are not in descending order: {scores[:8]}")
