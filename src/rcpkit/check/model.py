"""The checker's vocabulary: levels, checks, outcomes and the report (§14, §14.5)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from rcpkit.check.context import Context
from rcpkit.check.failures import Failed, Skipped

__all__ = [
    "LEVELS",
    "Check",
    "Failed",
    "Outcome",
    "Report",
    "Requirement",
    "Skipped",
    "Status",
]

LEVELS = ("L0", "L1", "L2")
Status = Literal["PASS", "FAIL", "SKIP"]


@dataclass(frozen=True, slots=True)
class Check:
    """One MUST of the spec, tagged with its level and section."""

    id: str
    level: str
    title: str
    section: str
    run: Callable[[Context], Awaitable[str | None]]
    # Raises Skipped when the check does not apply to this server.
    applies: Callable[[Context], None] | None = None
    # Needs a successful initialize (every check after the handshake does).
    needs_init: bool = True


@dataclass(frozen=True, slots=True)
class Outcome:
    id: str
    level: str
    title: str
    section: str
    status: Status
    detail: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "title": self.title,
            "section": self.section,
            "status": self.status,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Requirement:
    """What a level needs advertised, beyond passing its checks (§14.2, §14.3)."""

    level: str
    title: str
    met: bool
    detail: str = ""

    def to_wire(self) -> dict[str, Any]:
        return {"level": self.level, "title": self.title, "met": self.met, "detail": self.detail}


@dataclass(slots=True)
class Report:
    target: str
    transport: str
    outcomes: list[Outcome] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    declared: str | None = None
    server: dict[str, Any] = field(default_factory=dict)
    # Why the run stopped short (the server never answered, or initialize failed):
    # the checks after that point were not run rather than each reported failed.
    stopped: str | None = None
    stderr_tail: list[str] = field(default_factory=list)

    @property
    def certified(self) -> str | None:
        """§14.5: the highest level whose checks, and all lower levels' checks, pass."""
        if self.stopped is not None:
            return None  # checks that were not run prove nothing
        reached: str | None = None
        for level in LEVELS:
            upto = LEVELS[: LEVELS.index(level) + 1]
            failed = any(o.status == "FAIL" and o.level in upto for o in self.outcomes)
            unmet = any(not r.met and r.level in upto for r in self.requirements)
            if failed or unmet:
                break
            reached = level
        return reached

    @property
    def honest(self) -> bool:
        """§14.5: an overclaim (declared above certified) fails certification."""
        if self.declared not in LEVELS:
            return False
        certified = self.certified
        return certified is not None and LEVELS.index(self.declared) <= LEVELS.index(certified)

    @property
    def passed(self) -> bool:
        """Exit 0: no failed MUST and no overclaim (a stopped run certifies nothing)."""
        return self.honest and not any(o.status == "FAIL" for o in self.outcomes)

    def count(self, status: Status) -> int:
        return sum(o.status == status for o in self.outcomes)

    def to_wire(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "transport": self.transport,
            "server": self.server,
            "certifiedLevel": self.certified,
            "declaredLevel": self.declared,
            "declarationHonest": self.honest,
            "passed": self.passed,
            "summary": {status.lower(): self.count(status) for status in ("PASS", "FAIL", "SKIP")},
            "checks": [outcome.to_wire() for outcome in self.outcomes],
            "requirements": [requirement.to_wire() for requirement in self.requirements],
            "stopped": self.stopped,
            "stderrTail": self.stderr_tail,
        }
