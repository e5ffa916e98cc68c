"""What each level needs advertised, beyond passing its checks (§14.2, §14.3).

L1 is retrieval with dense, sparse and hybrid modes, filtering and citations.
L2 is L1 plus "a selection of" the §14.3 surfaces; this checker reads that
as at least three of them, each of which must then pass its own checks.
"""

from __future__ import annotations

from typing import Any

from rcpkit.check.model import Requirement

__all__ = ["L2_MINIMUM", "SOTA_SURFACES", "requirements"]

L2_MINIMUM = 3
SOTA_SURFACES = (
    "rerank",
    "multiVector",
    "sparseEmbed",
    "transform",
    "graph",
    "streaming",
    "pagination",
    "log",
)


def sota_surfaces(capabilities: dict[str, Any]) -> list[str]:
    found = [key for key in SOTA_SURFACES if key in capabilities]
    retrieve = capabilities.get("retrieve")
    if isinstance(retrieve, dict) and (retrieve.get("deterministic") or retrieve.get("snapshots")):
        found.append("reproducibility")
    return found


def requirements(capabilities: dict[str, Any]) -> list[Requirement]:
    retrieve = capabilities.get("retrieve")
    modes = retrieve.get("modes") if isinstance(retrieve, dict) else None
    modes = modes if isinstance(modes, list) else []
    all_modes = {"dense", "sparse", "hybrid"} <= set(modes)
    surfaces = sota_surfaces(capabilities)
    return [
        Requirement(
            "L1",
            "advertises retrieve with modes dense, sparse and hybrid",
            all_modes,
            f"modes {modes}" if retrieve is not None else "retrieve is not advertised",
        ),
        Requirement("L1", "advertises filter", "filter" in capabilities),
        Requirement("L1", "advertises citations", "citations" in capabilities),
        Requirement(
            "L2",
            f"advertises at least {L2_MINIMUM} §14.3 surfaces",
            len(surfaces) >= L2_MINIMUM,
            ", ".join(surfaces) or "none",
        ),
    ]
