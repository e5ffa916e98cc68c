"""What a handler sees of the runtime: its request's cancel flag, deadline, progress and log."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.filters import Filter

__all__ = ["LOG_LEVELS", "LogLevel", "RequestContext"]

LogLevel = Literal["debug", "info", "notice", "warning", "error"]
# §17.1: syslog-style severities, least to most severe.
LOG_LEVELS: dict[str, int] = {"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4}


ProgressSink = Callable[
    ["RequestContext", float, str | None, str | None, dict[str, Any] | None], None
]
LogSink = Callable[["RequestContext", LogLevel, str, dict[str, Any] | None, str | None], None]


class RequestContext:
    """Per-request runtime handle; safe to use from the event loop and worker threads.

    ``check_cancelled`` is the checkpoint a CPU-bound handler calls between
    steps: it raises once the request was cancelled (§7.14) or its deadline
    passed (§13.1), so the work stops and the runtime answers exactly once.
    """

    def __init__(
        self,
        id: Id,
        method: str,
        meta: dict[str, Any],
        *,
        deadline: float | None,
        progress: ProgressSink | None = None,
        log: LogSink | None = None,
        tenant: str | None = None,
    ) -> None:
        self.id = id
        self.method = method
        self.meta = meta
        self.deadline = deadline
        # §15.6: the caller's tenant as the transport authenticated it (never taken
        # from params or _meta). None: unscoped. A multi-tenant engine returns and
        # touches only that tenant's documents and ids.
        self.tenant = tenant
        self.notes: list[str] = []
        # §8: the request's filter as the runtime validated it (see rcpkit.matches).
        self.filter: Filter | None = None
        # The wire names of the params the client sent (a default is not a choice).
        self.sent: frozenset[str] = frozenset()
        # Set by the runtime once the response is written; later frames are dropped.
        self.answered = False
        # Runtime use: where this request's notifications go (its connection or stream).
        self.sink: Callable[[bytes], None] | None = None
        # A plain attribute is enough across threads: one writer, readers poll it.
        self._stopped: ErrorCode | None = None
        self._progress = progress
        self._log = log
        self._last_progress = 0.0

    # --- cancellation and deadline ---

    @property
    def cancelled(self) -> bool:
        return self._stopped is not None

    def remaining(self) -> float | None:
        """Seconds until the deadline, or None when the request has none."""
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()

    def check_cancelled(self) -> None:
        """Raise if the request was cancelled or its deadline passed."""
        if self._stopped is not None:
            raise _stopped(self._stopped)
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise _stopped(ErrorCode.TIMEOUT)

    def stop(self, code: ErrorCode = ErrorCode.CANCELLED) -> None:
        """Runtime use: flag the request stopped (cancel or deadline)."""
        if self._stopped is None:
            self._stopped = code

    # --- progress (§9) and log (§17.1) ---

    @property
    def streaming(self) -> bool:
        """Whether progress frames reach the client (it sent a token, we stream)."""
        return self._progress is not None

    def progress(
        self,
        progress: float,
        stage: str | None = None,
        message: str | None = None,
        partial: dict[str, Any] | None = None,
    ) -> None:
        """Report progress in [0, 1]; dropped when the client did not ask for it."""
        if self._progress is None:
            return
        # §9: progress is 0.0–1.0; keep it rising so clients can draw a bar.
        value = min(1.0, max(self._last_progress, float(progress)))
        self._last_progress = value
        self._progress(self, value, stage, message, partial)

    def log(
        self,
        level: LogLevel,
        message: str,
        data: dict[str, Any] | None = None,
        logger: str | None = None,
    ) -> None:
        """Emit a ``notifications/log``; dropped unless the client opted in."""
        if self._log is not None:
            self._log(self, level, message, data, logger)


def _stopped(code: ErrorCode) -> RCPError:
    if code == ErrorCode.TIMEOUT:
        return RCPError(ErrorCode.TIMEOUT, "deadline exceeded", retryable=True)
    return RCPError(ErrorCode.CANCELLED, "cancelled")
