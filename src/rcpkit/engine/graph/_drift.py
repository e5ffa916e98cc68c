"""DRIFT-style follow-ups: new queries toward the strongest parts of the graph not yet covered.

After a local search, every entity the query matched or a returned hit
showed is covered. The walk's other entities are grouped by their level-0
community; each group's PPR mass ranks it, and the best groups become
follow-ups "<query focus> <their strongest uncovered entity names>". If the
walk runs out, the strongest uncovered neighbours of covered entities in the
whole graph fill in, ring by ring up to `max_hops` out. A follow-up never
names a covered entity and never repeats.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from rcpkit.engine.graph._community_index import CommunityIndex
from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._local import Walk
from rcpkit.engine.graph._results import GraphHit
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph._text import STOP_WORDS, words

__all__ = ["covered_by", "focus_of", "followups", "fresh_hits"]

_FOCUS_WORDS = 5


def focus_of(query: str) -> str:
    """The query's content words (at most a few), the stem every follow-up starts with."""
    kept = [word for word in words(query) if word not in STOP_WORDS]
    return " ".join(kept[:_FOCUS_WORDS])


def covered_by(walk: Walk | None, hits: Iterable[GraphHit], covered: Iterable[str]) -> set[str]:
    """Entity ids covered once these hits are shown: previous ones, seeds, hit provenance."""
    now = set(covered)
    if walk is not None:
        now.update(seed.id for seed in walk.seeds)
    for hit in hits:
        now.update(hit.provenance.nodes)
    return now


def fresh_hits(hits: Sequence[GraphHit], covered: set[str], k: int) -> tuple[GraphHit, ...]:
    """Hits that show at least one entity not covered before (§7.7.3 dedup), at most `k`."""
    return tuple(hit for hit in hits if not set(hit.provenance.nodes) <= covered)[:k]


def followups(
    walk: Walk | None,
    query: str,
    covered: set[str],
    communities: CommunityIndex,
    config: GraphConfig,
) -> list[str]:
    """Between `min_followups` and `max_followups` new queries when the graph has room."""
    if walk is None:
        return []
    snapshot = walk.snapshot
    level0 = communities.membership.get(0, np.full(snapshot.n_nodes, -1, dtype=np.int64))
    groups: dict[str, list[tuple[float, int]]] = {}
    for local in walk.ranked():
        node = int(walk.graph.nodes[local])
        if snapshot.keys[node] in covered or walk.scores[local] <= 0:
            continue
        group = f"c{level0[node]}" if level0[node] >= 0 else f"n{node}"
        groups.setdefault(group, []).append((float(walk.scores[local]), node))
    ranked = sorted(groups.values(), key=lambda g: (-sum(s for s, _ in g), g[0][1]))
    picks = [[node for _, node in group[: config.followup_entities]] for group in ranked]
    if len(picks) < config.min_followups:
        used = {node for pick in picks for node in pick}
        picks += [[node] for node in _beyond(snapshot, covered, used, config)]
    focus = focus_of(query)
    made: list[str] = []
    for pick in picks:
        names = " ".join(snapshot.names[node] for node in pick)
        text = f"{focus} {names}".strip()
        if text.casefold() != query.strip().casefold() and text not in made:
            made.append(text)
        if len(made) >= config.max_followups:
            break
    return made


def _beyond(
    snapshot: Snapshot, covered: set[str], used: set[int], config: GraphConfig
) -> list[int]:
    """Uncovered entities outward from the covered ones, nearest ring first, strongest first."""
    frontier = sorted(snapshot.index_of[key] for key in covered if key in snapshot.index_of)
    reached = set(frontier)
    found: list[int] = []
    for _ in range(config.max_hops):
        best: dict[int, float] = {}
        for node in frontier:
            columns, values = snapshot.adjacency.row(node)
            cap = config.neighbour_cap
            for neighbour, weight in zip(
                columns[:cap].tolist(), values[:cap].tolist(), strict=True
            ):
                if neighbour not in reached:
                    best[neighbour] = max(best.get(neighbour, 0.0), weight)
        ring = sorted(best, key=lambda n: (-best[n], snapshot.keys[n]))
        reached.update(ring)
        found.extend(n for n in ring if n not in used and snapshot.keys[n] not in covered)
        if len(found) >= config.max_followups or not ring:
            break
        frontier = ring  # walk on through used entities too
    return found
