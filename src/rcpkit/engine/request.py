"""What the engine needs of one request: deadline, cancellation, notes, tenant, progress, log.

The engine is called by the RCP handlers (``rcpkit.handlers``) with the
server's ``RequestContext``, which satisfies :class:`EngineRequest`
structurally; the engine itself never imports the server. :class:`Subrequest`
is the engine's own request for work it starts itself (the rewriter's
pseudo-relevance feedback retrieve): it shares the parent's deadline, tenant and
cancellation, but keeps its notes and progress to itself.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

__all__ = ["EngineRequest", "Subrequest"]


class EngineRequest(Protocol):
    """One request as the engine sees it (``rcpkit.server.RequestContext`` is one)."""

    @property
    def deadline(self) -> float | None:
        """The ``time.monotonic()`` instant the request must be answered by (§13.1)."""
        ...

    @property
    def tenant(self) -> str | None:
        """§15.6: the caller's tenant as the transport authenticated it; None: unscoped."""
        ...

    @property
    def notes(self) -> list[str]:
        """``usage.notes``: what the engine changed or skipped to answer."""
        ...

    @property
    def streaming(self) -> bool:
        """Whether progress reaches the caller (worth building a §9 partial)."""
        ...

    def remaining(self) -> float | None:
        """Seconds until the deadline, or None without one."""
        ...

    def check_cancelled(self) -> None:
        """Raise (the §7.14 / §13.1 error) once the request was cancelled or timed out."""
        ...

    def progress(
        self,
        progress: float,
        stage: str | None = None,
        message: str | None = None,
        partial: dict[str, Any] | None = None,
    ) -> None:
        """§9: report progress in [0, 1]; dropped when nobody listens."""
        ...

    def log(
        self,
        level: Literal["debug", "info", "notice", "warning", "error"],
        message: str,
        data: dict[str, Any] | None = None,
        logger: str | None = None,
    ) -> None:
        """§17.1: a ``notifications/log`` to the caller; dropped unless it opted in."""
        ...


class Subrequest:
    """Engine-internal work on behalf of ``parent``: same deadline, tenant and cancel."""

    streaming = False

    def __init__(self, parent: EngineRequest) -> None:
        self._parent = parent
        self.notes: list[str] = []

    @property
    def deadline(self) -> float | None:
        return self._parent.deadline

    @property
    def tenant(self) -> str | None:
        return self._parent.tenant

    def remaining(self) -> float | None:
        return self._parent.remaining()

    def check_cancelled(self) -> None:
        self._parent.check_cancelled()

    def progress(
        self,
        progress: float,
        stage: str | None = None,
        message: str | None = None,
        partial: dict[str, Any] | None = None,
    ) -> None:
        """The parent's progress is its own pipeline's; a subrequest reports none."""

    def log(
        self,
        level: Literal["debug", "info", "notice", "warning", "error"],
        message: str,
        data: dict[str, Any] | None = None,
        logger: str | None = None,
    ) -> None:
        """Diagnostics of engine-internal work go to the caller like the parent's own."""
        self._parent.log(level, message, data, logger)
