"""Community titles and extractive summaries, computed from the graph alone (no LLM).

Centrality is a member's weighted degree inside its community. The title names
the most central members. The summary is the community's most central
sentences: candidates are sentences mentioning its `summary_entities` most
central members, scored `members mentioned × their summed centrality`, then
taken best first, skipping near-duplicates (word-set Jaccard ≥ 0.7), until
`summary_sentences` or `summary_chars` is reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph._text import content_words

__all__ = ["Summary", "clip", "internal_strength", "near_duplicate", "summarize"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

_DUPLICATE_JACCARD: Final = 0.7
_CANDIDATES_PER_SENTENCE: Final = 4  # sentences read per summary sentence wanted

# (chunk key, sentence index) pairs → their texts
SentenceTexts = Callable[[Sequence[tuple[int, int]]], Mapping[tuple[int, int], str]]


@dataclass(frozen=True, slots=True)
class Summary:
    """A community's members by centrality, its title and its summary sentences."""

    members: IntArray  # node indices, most central first
    centrality: FloatArray  # in [0, 1], aligned with members
    title: str
    sentences: tuple[tuple[int, int, str], ...]  # (chunk key, sentence index, text)

    @property
    def text(self) -> str:
        return " ".join(text for _, _, text in self.sentences)


def internal_strength(snapshot: Snapshot, membership: IntArray) -> FloatArray:
    """Each node's total edge weight to members of its own community."""
    inside = membership[snapshot.edge_src] == membership[snapshot.edge_dst]
    weight = snapshot.edge_weight[inside]
    n = snapshot.n_nodes
    result = np.bincount(snapshot.edge_src[inside], weight, minlength=n).astype(np.float64)
    result += np.bincount(snapshot.edge_dst[inside], weight, minlength=n)
    return result


def near_duplicate(text: str, kept: Sequence[str]) -> bool:
    """True when `text` shares ≥ 70% of its word set with an already kept text."""
    words = set(content_words(text))
    for other in kept:
        theirs = set(content_words(other))
        union = words | theirs
        if not union or len(words & theirs) / len(union) >= _DUPLICATE_JACCARD:
            return True
    return False


def clip(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters (with an ellipsis)."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def summarize(
    snapshot: Snapshot,
    members: IntArray,
    strength: FloatArray,
    config: GraphConfig,
    texts: SentenceTexts,
) -> Summary:
    """Title and extractive summary of the community made of `members`."""
    # Mentions break ties among members with no internal edges (and order singletons).
    tie = snapshot.mention_counts[members].astype(np.float64) * 1e-9
    order = np.lexsort((members, -(strength[members] + tie)))
    members = members[order]
    top = float(strength[members[0]]) if len(members) else 0.0
    centrality = strength[members] / top if top > 0 else np.ones(len(members))
    title = ", ".join(snapshot.names[int(node)] for node in members[: config.title_entities])
    candidates = _candidates(
        snapshot,
        members[: config.summary_entities],
        centrality[: config.summary_entities],
        config.summary_sentences * _CANDIDATES_PER_SENTENCE,
    )
    found = texts(candidates)
    chosen: list[tuple[int, int, str]] = []
    used = 0
    for pair in candidates:
        text = found.get(pair, "").strip()
        if not text or near_duplicate(text, [t for _, _, t in chosen]):
            continue
        if chosen and used + len(text) + 1 > config.summary_chars:
            continue
        text = clip(text, config.summary_chars)
        chosen.append((pair[0], pair[1], text))
        used += len(text) + 1
        if len(chosen) >= config.summary_sentences:
            break
    return Summary(members, centrality, title, tuple(chosen))


def _candidates(
    snapshot: Snapshot, members: IntArray, centrality: FloatArray, limit: int
) -> list[tuple[int, int]]:
    rows, index = snapshot.sentence_mentions.gather(members)
    sentences = snapshot.sentence_mentions.columns[index]
    # One vote per (member, sentence): repeated mentions in a sentence count once.
    pairs = (
        np.unique(np.stack([sentences, rows], axis=1), axis=0)
        if len(rows)
        else (np.zeros((0, 2), dtype=np.int64))
    )
    ids, inverse, counts = np.unique(pairs[:, 0], return_inverse=True, return_counts=True)
    weight = np.bincount(inverse.reshape(-1), centrality[pairs[:, 1]], minlength=len(ids))
    score = counts * weight
    best = ids[np.lexsort((ids, -score))][:limit]
    return [(int(snapshot.sentence_of[s, 0]), int(snapshot.sentence_of[s, 1])) for s in best]
