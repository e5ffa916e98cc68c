"""Anchoring a query on entities: longest string matches, then nearest entity names.

String matches are whole normalised n-grams of the query (longest first); a
content word that matched nothing may still name a multi-word *named* entity
(typed, not a noun phrase) by its last word ("Amundsen" → "roald amundsen", at
half weight) when few do. A
seed's weight is its specificity `log(1 + N / df)` (N chunks, df chunks that
mention it) times its similarity (1 for a whole string match), so a query
naming a rare entity is not drowned by a generic one it also names.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._normalize import normalize_key
from rcpkit.engine.graph._results import Seed
from rcpkit.engine.graph._snapshot import Snapshot
from rcpkit.engine.graph._text import STOP_WORDS, words

__all__ = ["match_seeds", "specificity"]

FloatArray = npt.NDArray[np.float64]


def specificity(snapshot: Snapshot) -> FloatArray:
    """`log(1 + N / df)` per node."""
    df = np.maximum(np.diff(snapshot.entity_chunks.indptr), 1).astype(np.float64)
    result: FloatArray = np.log1p(max(len(snapshot.chunk_keys), 1) / df)
    return result


_HEAD_MATCH_WEIGHT: Final = 0.5
_HEAD_MATCH_LIMIT: Final = 3  # a last word shared by more entities than this is too vague


def _string_matches(snapshot: Snapshot, query: str, longest: int) -> list[tuple[int, float]]:
    tokens = [normalize_key(token) or token for token in words(query)]  # "amundsen's" → "amundsen"
    covered = [False] * len(tokens)
    found: list[tuple[int, float]] = []
    for size in range(min(longest, len(tokens)), 0, -1):
        for start in range(len(tokens) - size + 1):
            gram = tokens[start : start + size]
            if all(covered[start : start + size]) or all(word in STOP_WORDS for word in gram):
                continue
            text = " ".join(gram)
            for key in (normalize_key(text), normalize_key(text, singularize=True)):
                node = snapshot.index_of.get(key)
                if node is not None:
                    found.append((node, 1.0))
                    covered[start : start + size] = [True] * size
                    break
    for token, done in zip(tokens, covered, strict=True):
        heads = snapshot.by_last_word.get(token, ())
        if not done and token not in STOP_WORDS and 0 < len(heads) <= _HEAD_MATCH_LIMIT:
            found.extend((node, _HEAD_MATCH_WEIGHT) for node in heads)
    unique: dict[int, float] = {}
    for node, weight in found:
        unique[node] = max(unique.get(node, 0.0), weight)
    return list(unique.items())


def match_seeds(
    snapshot: Snapshot,
    query: str,
    config: GraphConfig,
    query_vector: npt.NDArray[np.float32] | None = None,
    name_vectors: npt.NDArray[np.float32] | None = None,
) -> list[tuple[int, Seed]]:
    """`(node, seed)` pairs for `query`, strongest first; string matches before dense ones."""
    weights = specificity(snapshot)
    seeds = [
        (
            node,
            Seed(
                snapshot.keys[node],
                snapshot.names[node],
                float(weights[node]) * share,
                "exact",
                share,
            ),
        )
        for node, share in _string_matches(snapshot, query, config.max_query_ngram)
    ]
    if query_vector is not None and name_vectors is not None and len(name_vectors):
        taken = {node for node, _ in seeds}
        similarity = name_vectors @ query_vector
        ranked = np.lexsort((np.arange(len(similarity)), -similarity))
        head = ranked[: config.dense_seeds + len(taken)]
        dense = [int(node) for node in head if int(node) not in taken]
        for node in dense[: config.dense_seeds]:
            value = float(similarity[node])
            if value < config.min_seed_similarity:
                break
            seed = Seed(
                snapshot.keys[node],
                snapshot.names[node],
                float(weights[node]) * value,
                "dense",
                value,
            )
            seeds.append((node, seed))
    return sorted(seeds, key=lambda pair: (pair[1].match != "exact", -pair[1].weight, pair[0]))
