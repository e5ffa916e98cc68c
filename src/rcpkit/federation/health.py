"""Per-engine health: latency, slowness strikes, demotion and recovery (§16.2).

§16.2: "a slow or failing non-required engine is dropped after a client-side
deadline so one bad engine cannot stall the query". A fixed deadline still
costs every query that deadline while the engine stays slow; so an engine
whose last ``strikes`` calls were all slow (slower than ``slow_after``, or timed
out) is *demoted*: it is still asked, but given only ``demoted_timeout``
seconds, so the query no longer waits for it. One answer within that short
timeout promotes it again. Every transition is logged on the gateway's
stderr and visible in ``catalog/list`` and the metrics.
"""

from __future__ import annotations

import logging
import statistics
from collections import deque
from dataclasses import dataclass, field

__all__ = ["EngineHealth", "HealthPolicy"]

log = logging.getLogger("rcpkit.federation")


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    """When an engine counts as slow, and what a demoted engine is allowed."""

    slow_after: float = 2.0
    strikes: int = 3
    demoted_timeout: float = 0.25
    window: int = 32

    def __post_init__(self) -> None:
        if self.slow_after <= 0 or self.demoted_timeout <= 0 or self.strikes < 1:
            raise ValueError("slow_after and demoted_timeout must be > 0, strikes >= 1")


@dataclass(slots=True)
class EngineHealth:
    """One engine's recent calls, and whether it is demoted."""

    engine: str
    policy: HealthPolicy = field(default_factory=HealthPolicy)
    demoted: bool = False
    slow_in_a_row: int = 0
    calls: int = 0
    failures: int = 0
    latencies: deque[float] = field(default_factory=deque)

    def timeout(self, budget: float | None) -> float | None:
        """The time this engine gets for one call within ``budget``."""
        if not self.demoted:
            return budget
        short = self.policy.demoted_timeout
        return short if budget is None else min(budget, short)

    def answered(self, seconds: float) -> None:
        self.calls += 1
        self._remember(seconds)
        if self.demoted:
            self._promote(seconds)  # it answered within the short timeout
            return
        self._strike(seconds > self.policy.slow_after, f"took {seconds:.3g} s")

    def timed_out(self, seconds: float) -> None:
        self.calls += 1
        self.failures += 1
        if not self.demoted:
            self._strike(True, f"timed out after {seconds:.3g} s")

    def failed(self) -> None:
        """A failure that says nothing about speed (refused, down): no strike."""
        self.calls += 1
        self.failures += 1

    @property
    def p50_ms(self) -> float | None:
        if not self.latencies:
            return None
        return round(statistics.median(self.latencies) * 1000, 3)

    def to_wire(self) -> dict[str, object]:
        wire: dict[str, object] = {"demoted": self.demoted, "calls": self.calls}
        if self.failures:
            wire["failures"] = self.failures
        if self.p50_ms is not None:
            wire["p50Ms"] = self.p50_ms
        return wire

    def _remember(self, seconds: float) -> None:
        self.latencies.append(seconds)
        while len(self.latencies) > self.policy.window:
            self.latencies.popleft()

    def _strike(self, slow: bool, what: str) -> None:
        self.slow_in_a_row = self.slow_in_a_row + 1 if slow else 0
        if self.slow_in_a_row >= self.policy.strikes:
            self.demoted = True
            log.warning(
                "engine '%s' demoted: %d calls in a row slower than %.3g s (last %s); "
                "it now gets %.3g s per call until it answers in time",
                self.engine,
                self.slow_in_a_row,
                self.policy.slow_after,
                what,
                self.policy.demoted_timeout,
            )

    def _promote(self, seconds: float) -> None:
        self.demoted = False
        self.slow_in_a_row = 0
        log.warning("engine '%s' promoted: answered in %.3g s", self.engine, seconds)
