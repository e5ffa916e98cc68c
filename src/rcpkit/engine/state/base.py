"""The state-store interface: where feedback, memories and trajectories live.

Two implementations share one contract (tests/engine/state/test_state_contract.py):
the embedded one (SQLite files beside the index, trajectories in memory) for a
single server, and the PostgreSQL one (tables in the shared database) so that
any of N stateless servers answers any request the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from rcpkit.protocol import messages as m

__all__ = [
    "Database",
    "EngineState",
    "FeedbackStore",
    "MemoryTable",
    "TrajectoryStore",
]


class FeedbackStore(Protocol):
    quarantine_reports: int

    def record(self, params: m.FeedbackParams, tenant: str | None) -> int: ...
    def quarantined(self, tenant: str | None) -> frozenset[str]: ...
    def count(self, tenant: str | None = None) -> int: ...
    def close(self) -> None: ...


class MemoryTable(Protocol):
    """Where built memories are kept; ``load(None, t)`` is the tenant's latest global one."""

    def save(
        self, memory_id: str, tenant: str | None, scope: str, session_id: str | None, payload: str
    ) -> None: ...
    def load(self, memory_id: str | None, tenant: str | None) -> str | None: ...
    def close(self) -> None: ...


class TrajectoryStore(Protocol):
    ttl_seconds: int

    def seen(self, tenant: str | None, session_id: str) -> frozenset[str]: ...
    def record(self, tenant: str | None, session_id: str, hit_ids: Iterable[str]) -> None: ...
    def state(self, tenant: str | None, session_id: str) -> dict[str, object]: ...
    def save_state(self, tenant: str | None, session_id: str, state: dict[str, object]) -> None: ...


class Database(Protocol):
    """What the PostgreSQL state needs of the store: deadline-bounded connections."""

    def reading(self) -> AbstractContextManager[Any]: ...
    def writing(self) -> AbstractContextManager[Any]: ...


@dataclass(frozen=True, slots=True)
class EngineState:
    feedback: FeedbackStore
    memory: MemoryTable
    trajectories: TrajectoryStore

    def close(self) -> None:
        self.feedback.close()
        self.memory.close()
