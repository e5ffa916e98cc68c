"""The retry policy of §12.2: exponential backoff with jitter, honouring server hints.

Retried: -32011, -32010, -32014 (and any error the server marked
``retryable``); -32603 once. Never retried: capability/params errors,
-32006, a client-side deadline (the budget is spent) or a dead transport
(nothing is known about what took effect, §13.1). A write (§7.10) is retried
only when it is idempotent: ``index/delete``, ``index/add`` whose documents
all carry an ``id``, or any write with ``_meta.idempotencyKey``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rcpkit.client.errors import DeadlineExceeded, TransportClosed
from rcpkit.protocol.errors import ErrorCode, RCPError, is_retryable
from rcpkit.protocol.methods import METHODS

__all__ = ["NO_RETRY", "RetryPolicy", "is_idempotent"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``attempts`` counts every try, the first included (1 = never retry).

    The n-th retry waits ``min(max_delay, base_delay * multiplier**(n-1))``,
    of which a ``jitter`` fraction is random, and never less than the
    server's ``retryAfterMs`` / ``Retry-After`` hint (capped at ``max_retry_after``).
    """

    attempts: int = 3
    base_delay: float = 0.05
    multiplier: float = 2.0
    max_delay: float = 2.0
    jitter: float = 0.5
    max_retry_after: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base_delay < 0 or not 0.0 <= self.jitter <= 1.0:
            raise ValueError("attempts >= 1, base_delay >= 0 and jitter in [0, 1]")

    def delay(
        self,
        error: RCPError,
        attempt: int,
        method: str,
        params: Mapping[str, Any],
        *,
        uniform: Callable[[], float] = random.random,
    ) -> float | None:
        """Seconds to wait before retrying after ``attempt`` failed with ``error``; None: don't."""
        if attempt >= self.attempts or not _retryable(error, attempt):
            return None
        if not is_idempotent(method, params):
            return None
        backoff = min(self.max_delay, self.base_delay * self.multiplier ** (attempt - 1))
        wait = backoff * (1.0 - self.jitter) + backoff * self.jitter * uniform()
        if error.retry_after_ms is not None and error.retry_after_ms > 0:
            wait = max(wait, min(self.max_retry_after, error.retry_after_ms / 1000.0))
        return wait


NO_RETRY = RetryPolicy(attempts=1)


def _retryable(error: RCPError, attempt: int) -> bool:
    if isinstance(error, DeadlineExceeded | TransportClosed):
        return False
    if error.retryable is not None:
        # §12.1: the server says whether an identical retry might succeed.
        return error.retryable and error.code != ErrorCode.CANCELLED
    if error.code == ErrorCode.INTERNAL_ERROR:
        return attempt == 1  # §12.2: "retry once; if it recurs, treat as fatal"
    return is_retryable(error.code)


def is_idempotent(method: str, params: Mapping[str, Any]) -> bool:
    """Whether repeating this call cannot change the outcome (§7.10, §7.11, §13.1)."""
    spec = METHODS.get(method)
    if spec is None or not spec.writes:
        return True
    meta = params.get("_meta")
    if isinstance(meta, Mapping) and isinstance(meta.get("idempotencyKey"), str):
        return True
    if method == "index/delete":
        return True  # §7.11: deletion is idempotent
    if method == "index/add":
        documents = params.get("documents")
        return isinstance(documents, list) and all(
            isinstance(document, Mapping) and isinstance(document.get("id"), str)
            for document in documents
        )
    return False
