"""The embedded engine state: one server's own files beside its index."""

from __future__ import annotations

from pathlib import Path

from rcpkit.engine.state.base import EngineState
from rcpkit.engine.state.feedback import FeedbackLog
from rcpkit.engine.state.memory import SQLiteMemories
from rcpkit.engine.state.trajectories import Trajectories

__all__ = ["embedded_state"]


def embedded_state(folder: Path, quarantine_reports: int, ttl_seconds: int) -> EngineState:
    """Today's files beside the index: one server's own state."""
    folder.mkdir(parents=True, exist_ok=True)
    return EngineState(
        FeedbackLog(folder / "feedback.sqlite3", quarantine_reports),
        SQLiteMemories(folder / "memory.sqlite3"),
        Trajectories(ttl_seconds),
    )
