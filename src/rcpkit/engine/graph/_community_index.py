"""Building the stored communities of a snapshot, and reading them back for queries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._communities import community_method, hierarchy
from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._results import CommunityInfo
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph._store import CommunityRow
from rcpkit.engine.graph._summaries import internal_strength, summarize
from rcpkit.engine.graph._text import terms
from rcpkit.engine.graph.storage import GraphStorage

__all__ = ["CommunityIndex", "build_communities", "load_communities", "sentence_texts"]

IntArray = npt.NDArray[np.int64]

_PAIRS_PER_QUERY = 400
_MEMBER_NAMES = 50  # member ids (most central first) that count as a community's words


def sentence_texts(
    store: GraphStorage, pairs: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], str]:
    """Texts of `(chunk key, sentence index)` pairs that exist."""
    found: dict[tuple[int, int], str] = {}
    unique = sorted(set(pairs))
    for start in range(0, len(unique), _PAIRS_PER_QUERY):
        batch = unique[start : start + _PAIRS_PER_QUERY]
        values = ",".join("(?, ?)" for _ in batch)
        query = (
            f"SELECT chunk_key, idx, text FROM sentences WHERE (chunk_key, idx)"
            f" IN (VALUES {values})"
        )
        for chunk_key, index, text in store.read(query, [v for pair in batch for v in pair]):
            found[(int(chunk_key), int(index))] = str(text)
    return found


def _groups(membership: IntArray) -> list[IntArray]:
    order = np.argsort(membership, kind="stable")
    bounds = np.flatnonzero(np.diff(membership[order])) + 1
    return np.split(order, bounds) if len(order) else []


def build_communities(
    snapshot: Snapshot, store: GraphStorage, config: GraphConfig
) -> list[CommunityRow]:
    """Partition the snapshot's graph into levels and summarise every community."""
    _, partition = community_method(config.community_method)
    levels = hierarchy(
        snapshot.n_nodes,
        (snapshot.edge_src, snapshot.edge_dst, snapshot.edge_weight),
        config.resolution,
        config.coarsening,
        config.max_community_size,
        config.seed,
        partition,
    )
    kept: list[dict[int, str]] = []  # per level: community index → id
    grouped: list[list[IntArray]] = []
    for level, membership in enumerate(levels):
        groups = _groups(membership)
        grouped.append(groups)
        big = [c for c, members in enumerate(groups) if len(members) >= config.min_community_size]
        kept.append({c: f"c{level}.{rank}" for rank, c in enumerate(big)})
    rows: list[CommunityRow] = []
    for level, membership in enumerate(levels):
        strength = internal_strength(snapshot, membership)
        for rank, (community, identifier) in enumerate(kept[level].items()):
            members = grouped[level][community].astype(np.int64)
            summary = summarize(
                snapshot, members, strength, config, lambda pairs: sentence_texts(store, pairs)
            )
            parent = None
            if level + 1 < len(levels):
                parent = kept[level + 1].get(int(levels[level + 1][members[0]]))
            rows.append(
                (
                    identifier,
                    level,
                    rank,
                    parent,
                    summary.title,
                    summary.text,
                    len(members),
                    list(summary.sentences),
                    [
                        (int(snapshot.eids[n]), float(c))
                        for n, c in zip(summary.members, summary.centrality, strict=True)
                    ],
                )
            )
    return rows


@dataclass(frozen=True, slots=True)
class CommunityIndex:
    """The stored communities of one graph version, with node memberships per level."""

    version: int
    infos: tuple[CommunityInfo, ...]  # by level, then rank
    sentences: tuple[tuple[tuple[int, int, str], ...], ...]  # aligned with infos
    members: tuple[IntArray, ...]  # node indices, aligned with infos
    membership: Mapping[int, IntArray]  # level → info index per node (-1: none)
    terms: tuple[frozenset[str], ...]  # words of title, summary and central member names

    @property
    def levels(self) -> int:
        return len(self.membership)

    def at_level(self, level: int) -> list[int]:
        return [i for i, info in enumerate(self.infos) if info.level == level]


def load_communities(store: GraphStorage, snapshot: Snapshot) -> CommunityIndex:
    """Read the stored communities, mapping member eids to the snapshot's nodes."""
    with store.reading():
        return _load(store, snapshot)


def _load(store: GraphStorage, snapshot: Snapshot) -> CommunityIndex:
    members = store.read(
        "SELECT community, eid FROM community_members ORDER BY community, centrality DESC, eid"
    )
    communities = store.read(
        "SELECT id, level, parent, title, summary, size, sentences FROM communities"
        " ORDER BY level, rank"
    )
    return _index(snapshot, members, communities, store.communities_version)


def index_of_rows(rows: Sequence[CommunityRow], snapshot: Snapshot) -> CommunityIndex:
    """The index of communities computed but not stored (a read-only server's, issue 20)."""
    members = [
        (row[0], eid)
        for row in sorted(rows, key=lambda row: row[0])
        for eid, _ in sorted(row[8], key=lambda pair: (-pair[1], pair[0]))
    ]
    communities = [
        (row[0], row[1], row[3], row[4], row[5], row[6], json.dumps(row[7]))
        for row in sorted(rows, key=lambda row: (row[1], row[2]))
    ]
    return _index(snapshot, members, communities, snapshot.version)


def _index(
    snapshot: Snapshot, member_rows: Any, community_rows: Any, version: int
) -> CommunityIndex:
    """Rows as ``communities``/``community_members`` hold them, mapped to the snapshot's nodes."""
    position = {int(eid): node for node, eid in enumerate(snapshot.eids)}
    members: dict[str, list[int]] = {}
    for community, eid in member_rows:
        if int(eid) in position:
            members.setdefault(str(community), []).append(position[int(eid)])
    infos: list[CommunityInfo] = []
    sentences: list[tuple[tuple[int, int, str], ...]] = []
    nodes: list[IntArray] = []
    for cid, level, parent, title, summary, size, chosen in community_rows:
        picked = tuple((int(k), int(i), str(t)) for k, i, t in json.loads(chosen))
        node_list = np.array(members.get(str(cid), []), dtype=np.int64)
        infos.append(
            CommunityInfo(
                str(cid),
                int(level),
                str(title),
                str(summary),
                int(size),
                tuple(snapshot.keys[int(n)] for n in node_list),
                parent,
                tuple(dict.fromkeys(k for k, _, _ in picked)),
            )
        )
        sentences.append(picked)
        nodes.append(node_list)
    membership: dict[int, IntArray] = {}
    for index, info in enumerate(infos):
        array = membership.setdefault(info.level, np.full(snapshot.n_nodes, -1, dtype=np.int64))
        array[nodes[index]] = index
    words = tuple(
        frozenset(terms(" ".join([info.title, info.summary, *info.members[:_MEMBER_NAMES]])))
        for info in infos
    )
    return CommunityIndex(version, tuple(infos), tuple(sentences), tuple(nodes), membership, words)
