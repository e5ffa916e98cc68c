"""The stage sweep: which ``retrieve`` configurations to measure on a given server.

Every stage is a set of ``retrieve`` params (or a ``graph`` call) that the
server's initialize capabilities say it supports (§6.1), so the same sweep
runs against any engine: a lexical-only server gets the rows it can answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_STAGE", "Stage", "available_stages", "select_stages"]

DEFAULT_STAGE = "default"
# Old spellings still accepted by --stages; the spec's word (§7.7 mode) is what is shown.
ALIASES = {"lexical": "sparse"}


@dataclass(frozen=True, slots=True)
class Stage:
    key: str  # what --stages names
    label: str  # what the table prints
    params: dict[str, Any] = field(default_factory=dict)  # wire-shaped retrieve fields
    method: str = "retrieve"  # or "graph" (params are then graph params)


def available_stages(capabilities: Mapping[str, Any]) -> list[Stage]:
    """Every stage the server's capabilities allow, the default ``retrieve`` first."""
    retrieve = _object(capabilities.get("retrieve"))
    modes = set(retrieve.get("modes") or [])
    fusions = list(retrieve.get("fusion") or [])
    stages = [Stage(DEFAULT_STAGE, "default retrieve (no options)")]
    if "sparse" in modes:
        stages.append(Stage("sparse", "sparse only", {"mode": "sparse"}))
    if "dense" in modes:
        stages.append(Stage("dense", "dense only", {"mode": "dense"}))
    if "hybrid" in modes:
        for method in fusions:
            stages.append(
                Stage(
                    f"hybrid-{method}",
                    f"hybrid, {method} fusion",
                    {"mode": "hybrid", "fusion": {"method": method}},
                )
            )
    rerank = _object(capabilities.get("rerank"))
    if retrieve.get("rerankBuiltin"):
        # No topN: the harness asks k >= depth hits and §7.7 wants topN >= k.
        for method in rerank.get("methods") or []:
            stages.append(
                Stage(
                    f"rerank-{method}", f"default + {method} rerank", {"rerank": {"method": method}}
                )
            )
    if retrieve.get("mmr"):
        stages.append(Stage("mmr", "default + MMR (λ 0.7)", {"mmr": {"lambda": 0.7}}))
    transform = _object(capabilities.get("transform"))
    # retrieve.rewrite names a transform method, and only those are accepted (§7.7).
    for method in transform.get("methods") or []:
        stages.append(
            Stage(f"rewrite-{method}", f"default + rewrite {method}", {"rewrite": method})
        )
    graph = _object(capabilities.get("graph"))
    if "local" in (graph.get("ops") or []):
        stages.append(Stage("graph-local", "graph local search alone", {"op": "local"}, "graph"))
    return stages


def select_stages(stages: Sequence[Stage], wanted: Sequence[str] | None) -> list[Stage]:
    """The stages named in ``wanted`` (all when None); an unknown name is a usage error."""
    if not wanted:
        return list(stages)
    by_key = {stage.key: stage for stage in stages}
    wanted = [ALIASES.get(key, key) for key in wanted]
    unknown = [key for key in wanted if key not in by_key]
    if unknown:
        raise ValueError(
            f"the server offers no stage {', '.join(unknown)}; it offers: {', '.join(by_key)}"
        )
    return [by_key[key] for key in dict.fromkeys(wanted)]


def _object(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}
