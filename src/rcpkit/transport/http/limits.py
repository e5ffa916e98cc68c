"""Load shedding at the transport (§15.5): a rate per caller and in-flight caps.

A caller is its credential's name when authenticated, else its address. Both
limiters keep a bounded amount of state, so a flood of distinct callers
cannot grow them without limit.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from enum import Enum

from rcpkit.transport.http.config import RateLimit

__all__ = ["Clock", "ConcurrencyLimiter", "RateLimiter", "Refusal"]

Clock = Callable[[], float]

# Distinct callers whose bucket we remember; the least recently seen go first
# (a forgotten caller starts with a full bucket, which only ever errs generous).
_MAX_CALLERS = 100_000


class RateLimiter:
    """A token bucket per caller."""

    def __init__(
        self, limit: RateLimit, *, clock: Clock = time.monotonic, max_callers: int = _MAX_CALLERS
    ) -> None:
        self._rate = limit.rate
        self._burst = float(limit.burst)
        self._clock = clock
        self._max_callers = max_callers
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def acquire(self, caller: str) -> int | None:
        """Take one token: None when allowed, else the milliseconds until one is due."""
        now = self._clock()
        tokens, last = self._buckets.pop(caller, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        self._buckets[caller] = (tokens, now)
        if len(self._buckets) > self._max_callers:
            self._buckets.popitem(last=False)
        if allowed:
            return None
        return max(1, math.ceil((1.0 - tokens) / self._rate * 1000.0))


class Refusal(Enum):
    CALLER = "caller"  # this caller has too many requests in flight → 429
    SERVER = "server"  # the whole process is at capacity → 503


class ConcurrencyLimiter:
    """In-flight requests (an SSE stream counts until it ends), per caller and in all."""

    def __init__(self, per_caller: int | None, total: int | None) -> None:
        self.per_caller = per_caller
        self.total = total
        self._in_flight = 0
        self._by_caller: dict[str, int] = {}

    def acquire(self, caller: str) -> Refusal | None:
        if self.total is not None and self._in_flight >= self.total:
            return Refusal.SERVER
        held = self._by_caller.get(caller, 0)
        if self.per_caller is not None and held >= self.per_caller:
            return Refusal.CALLER
        self._by_caller[caller] = held + 1
        self._in_flight += 1
        return None

    def release(self, caller: str) -> None:
        held = self._by_caller.get(caller, 0) - 1
        if held > 0:
            self._by_caller[caller] = held
        else:
            self._by_caller.pop(caller, None)
        self._in_flight -= 1

    @property
    def in_flight(self) -> int:
        return self._in_flight
