"""Agentic sessions (§7.7.3): hits already returned in a trajectory are not returned again.

The embedded state's (``state.postgres`` keeps them in the shared database):
in memory with a time-to-live. ``sessionId`` is a hint, so a restarted server
answers correctly without it (it just forgets what it sent). Keys are scoped
by tenant so one tenant's session ids never touch another's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Trajectories"]

MAX_SESSIONS = 10_000  # oldest sessions are dropped beyond this (bounded memory)
MAX_SEEN = 10_000  # hit ids remembered per session


@dataclass(slots=True)
class _Trajectory:
    expires: float
    seen: set[str] = field(default_factory=set)
    state: dict[str, object] = field(default_factory=dict)


class Trajectories:
    def __init__(self, ttl_seconds: int) -> None:
        self.ttl_seconds = ttl_seconds
        self._lock = threading.Lock()
        self._sessions: dict[tuple[str | None, str], _Trajectory] = {}

    def seen(self, tenant: str | None, session_id: str) -> frozenset[str]:
        """Hit ids this trajectory already returned (empty once expired)."""
        with self._lock:
            trajectory = self._live(tenant, session_id)
            return frozenset(trajectory.seen) if trajectory else frozenset()

    def record(self, tenant: str | None, session_id: str, hit_ids: Iterable[str]) -> None:
        with self._lock:
            trajectory = self._live(tenant, session_id) or self._open(tenant, session_id)
            trajectory.expires = time.monotonic() + self.ttl_seconds
            if len(trajectory.seen) < MAX_SEEN:
                trajectory.seen.update(hit_ids)

    def state(self, tenant: str | None, session_id: str) -> dict[str, object]:
        """A copy of the trajectory-scoped state (e.g. the entities a DRIFT search covered)."""
        with self._lock:
            trajectory = self._live(tenant, session_id) or self._open(tenant, session_id)
            trajectory.expires = time.monotonic() + self.ttl_seconds
            return dict(trajectory.state)

    def save_state(self, tenant: str | None, session_id: str, state: dict[str, object]) -> None:
        with self._lock:
            trajectory = self._live(tenant, session_id) or self._open(tenant, session_id)
            trajectory.expires = time.monotonic() + self.ttl_seconds
            trajectory.state = dict(state)

    def _live(self, tenant: str | None, session_id: str) -> _Trajectory | None:
        trajectory = self._sessions.get((tenant, session_id))
        if trajectory is not None and trajectory.expires < time.monotonic():
            del self._sessions[(tenant, session_id)]
            return None
        return trajectory

    def _open(self, tenant: str | None, session_id: str) -> _Trajectory:
        if len(self._sessions) >= MAX_SESSIONS:
            oldest = min(self._sessions, key=lambda key: self._sessions[key].expires)
            del self._sessions[oldest]
        trajectory = _Trajectory(time.monotonic() + self.ttl_seconds)
        self._sessions[(tenant, session_id)] = trajectory
        return trajectory
