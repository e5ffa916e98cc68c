"""The engine's request for an in-process call: no deadline, no tenant, nobody listening."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

__all__ = ["LocalRequest"]


class LocalRequest:
    """Satisfies ``rcpkit.engine.request.EngineRequest`` without a server.

    Progress (§9) and logs (§17.1) have no listener in process, and the call
    is the caller's own thread, so nothing cancels it but the caller.
    """

    streaming = False
    deadline: float | None = None
    tenant: str | None = None

    def __init__(self, notes: Iterable[str] = ()) -> None:
        self.notes: list[str] = list(notes)

    def remaining(self) -> float | None:
        return None

    def check_cancelled(self) -> None:
        """Nothing cancels an in-process call."""

    def progress(
        self,
        progress: float,
        stage: str | None = None,
        message: str | None = None,
        partial: dict[str, Any] | None = None,
    ) -> None:
        """Dropped: nobody listens (§9)."""

    def log(
        self,
        level: Literal["debug", "info", "notice", "warning", "error"],
        message: str,
        data: dict[str, Any] | None = None,
        logger: str | None = None,
    ) -> None:
        """Dropped: nobody opted in (§17.1)."""
