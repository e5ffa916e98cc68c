"""Per-call options shared by every typed client method."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rcpkit.client.connection import LogCallback, ProgressCallback
from rcpkit.client.retry import RetryPolicy

__all__ = ["CallOptions"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call is made.

    ``timeout``: the client-side deadline in seconds for the whole call, retries
    included; it travels as ``_meta.deadlineMs`` (§16.2). None: the client's default.
    ``meta``: extra ``_meta`` keys (``idempotencyKey``, ``traceId``, …).
    ``retry``: overrides the client's policy. ``on_progress``/``on_log``: callbacks
    for this call's frames (§9, §17.1); advisory, never needed for the result.
    """

    timeout: float | None = None
    meta: Mapping[str, Any] | None = None
    retry: RetryPolicy | None = None
    on_progress: ProgressCallback | None = None
    on_log: LogCallback | None = None

    def merged(self, timeout: float | None, on_progress: ProgressCallback | None) -> CallOptions:
        """These options with the per-call shortcuts (when given) applied on top."""
        return CallOptions(
            timeout if timeout is not None else self.timeout,
            self.meta,
            self.retry,
            on_progress if on_progress is not None else self.on_progress,
            self.on_log,
        )
