"""What a federated call returns: the fused hits plus who answered, failed or was skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from rcpkit.protocol.content import Hit
from rcpkit.protocol.errors import RCPError

__all__ = ["EngineFailure", "FederatedResult"]


@dataclass(frozen=True, slots=True)
class EngineFailure:
    """An engine that errored or timed out (§16.2 partial failure)."""

    engine: str
    code: int
    message: str

    @classmethod
    def of(cls, engine: str, error: RCPError) -> EngineFailure:
        return cls(engine, error.code, error.message)

    def note(self) -> str:
        return f"engine '{self.engine}' failed: [{self.code}] {self.message}"

    def to_wire(self) -> dict[str, Any]:
        return {"engine": self.engine, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class FederatedResult:
    """A fused answer. ``degraded``: some engine failed, so the hits may be thin (§16.2)."""

    hits: list[Hit]
    answered: tuple[str, ...]
    failures: tuple[EngineFailure, ...] = ()
    notes: tuple[str, ...] = ()
    candidates: int = 0
    latency_ms: float = 0.0
    fusion: str | None = None
    # graph only (§7.9): summary, communities, followups, nodes, edges
    graph: dict[str, Any] = field(default_factory=dict)
    # The gateway-signed cursor of the next page of the fused list, if there may be one.
    next_cursor: str | None = None

    @property
    def degraded(self) -> bool:
        return bool(self.failures)

    def to_wire(self) -> dict[str, Any]:
        """The result object a gateway answers with (``_meta.degraded`` lists failures)."""
        usage: dict[str, Any] = {"candidates": self.candidates, "latencyMs": self.latency_ms}
        if self.notes:
            usage["notes"] = list(self.notes)
        meta: dict[str, Any] = {"federation": {"answered": list(self.answered)}}
        if self.fusion is not None:
            meta["federation"]["fusion"] = self.fusion
        if self.failures:
            meta["degraded"] = [failure.to_wire() for failure in self.failures]
        wire: dict[str, Any] = {"hits": msgspec.to_builtins(self.hits), "usage": usage}
        wire.update(self.graph)
        if self.next_cursor is not None:
            wire["nextCursor"] = self.next_cursor
        wire["_meta"] = meta
        return wire
