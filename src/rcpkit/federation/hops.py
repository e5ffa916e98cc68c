"""Loop detection and budget propagation for federated requests (§16.2).

Every federated request carries ``_meta.federation = {depth, path}``: an
aggregator decrements ``depth``, appends its identity to ``path``, never
forwards at depth 0 and never forwards to an engine whose identity is
already in the path. ``_meta.deadlineMs`` downstream is strictly smaller
than what the aggregator was given, keeping time for its own fusion.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_DEPTH",
    "FEDERATION_PATH_ENV",
    "Hop",
    "downstream_budget",
    "engine_identity",
    "inherited_path",
]

# §16.2: the RECOMMENDED hop budget of an originating client.
DEFAULT_DEPTH = 3
# A spawned stdio engine learns the path that spawned it, so that a registry
# listing its own gateway stops at start-up instead of spawning forever.
FEDERATION_PATH_ENV = "RCPKIT_FEDERATION_PATH"
# What an aggregator keeps of its own budget for fusion: a tenth, and at least 5 ms.
_RESERVE_FRACTION = 0.1
_MINIMUM_RESERVE = 0.005


@dataclass(frozen=True, slots=True)
class Hop:
    """The remaining hop budget and the aggregators already traversed."""

    depth: int
    path: tuple[str, ...] = ()

    @classmethod
    def incoming(cls, meta: Mapping[str, Any] | None, default_depth: int = DEFAULT_DEPTH) -> Hop:
        """The hop a request arrived with (absent or malformed: a fresh budget)."""
        raw = meta.get("federation") if meta else None
        if not isinstance(raw, Mapping):
            return cls(default_depth)
        depth = raw.get("depth")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            depth = default_depth
        path = raw.get("path")
        names = (
            tuple(item for item in path if isinstance(item, str)) if isinstance(path, list) else ()
        )
        return cls(depth, names)

    def forward(self, identity: str | None) -> Hop | None:
        """The hop to send downstream, or None when the budget is spent.

        Without an identity we are the originating client: the hop goes out as
        it is. An aggregator decrements the depth and appends itself.
        """
        if identity is None:
            return self
        if self.depth <= 0:
            return None
        return Hop(self.depth - 1, (*self.path, identity))

    def to_wire(self) -> dict[str, Any]:
        return {"depth": self.depth, "path": list(self.path)}


def downstream_budget(remaining: float | None, engine_timeout: float | None) -> float | None:
    """Seconds an engine may take: strictly less than what remains (§16.2), and at most
    ``engine_timeout``. Zero or less means there is no time left to ask anyone."""
    if remaining is None:
        return engine_timeout
    budget = remaining - max(_MINIMUM_RESERVE, remaining * _RESERVE_FRACTION)
    return budget if engine_timeout is None else min(budget, engine_timeout)


def engine_identity(meta: Mapping[str, Any], server_name: str, aggregator: bool) -> str | None:
    """The identity an engine is known by in federation paths.

    An aggregator states it in ``initialize.result._meta.federation.identity``;
    one that does not is known by its server name. A plain engine never forwards,
    so it has none (§16.2: it ignores ``_meta.federation``).
    """
    federation = meta.get("federation")
    identity = federation.get("identity") if isinstance(federation, Mapping) else None
    if isinstance(identity, str) and identity:
        return identity
    return server_name if aggregator else None


def inherited_path(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The federation path of the aggregators that spawned this process, if any."""
    raw = (os.environ if environ is None else environ).get(FEDERATION_PATH_ENV, "")
    try:
        value = json.loads(raw) if raw else []
    except ValueError:
        return ()
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
