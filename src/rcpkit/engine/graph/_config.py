"""Typed settings of the graph layer: weighting, communities, walks, summaries, bounds."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GraphConfig"]


@dataclass(frozen=True, slots=True)
class GraphConfig:
    """Every knob of the graph layer; the defaults suit chunks of a few hundred words."""

    # Edges: a shared sentence counts 1, a shared chunk `chunk_weight` (see _weights).
    weighting: str = "lmi"
    chunk_weight: float = 0.25
    # Communities: `method` from COMMUNITY_METHODS ("auto" = leiden, else louvain).
    community_method: str = "auto"
    resolution: float = 1.0  # level 0, before communities over the size bound are split
    max_community_size: int = 64  # level 0 bound
    coarsening: tuple[float, ...] = (4.0, 1.0, 0.25)  # one resolution per level above 0
    min_community_size: int = 2  # smaller communities are not stored
    seed: int = 42
    # Walks: personalised PageRank restart probability is 1 - damping.
    damping: float = 0.85
    max_iterations: int = 50
    tolerance: float = 1e-6  # L1 change between iterations
    specificity_weighting: bool = True  # results ranked by PPR × log(1 + N / df)
    # §15.5 bounds on work per query.
    max_hops: int = 3
    max_k: int = 100
    neighbour_cap: int = 32  # strongest edges followed out of each node per hop
    max_nodes: int = 1500  # neighbourhood size cap
    # Seeds: string matches plus the nearest entity names by the embedder.
    dense_seeds: int = 5
    min_seed_similarity: float = 0.35
    max_query_ngram: int = 4
    # Community summaries and the global reduce step.
    summary_sentences: int = 3
    summary_chars: int = 600
    summary_entities: int = 30  # the most central members whose mentions are read
    title_entities: int = 3
    reduce_sentences: int = 6
    reduce_chars: int = 1200
    dense_share: float = 0.5  # global: dense vs lexical share of a community's score
    # DRIFT follow-ups.
    min_followups: int = 2
    max_followups: int = 5
    followup_entities: int = 2
    embed_batch: int = 256

    def __post_init__(self) -> None:
        if self.resolution <= 0 or any(r <= 0 for r in self.coarsening):
            raise ValueError("resolution and coarsening resolutions must be positive")
        if self.max_community_size < 2 or self.min_community_size < 1:
            raise ValueError("max_community_size must be >= 2 and min_community_size >= 1")
        if not 0.0 < self.damping < 1.0:
            raise ValueError("damping must be in (0, 1)")
        if self.max_hops < 0 or self.max_k < 1 or self.neighbour_cap < 1 or self.max_nodes < 1:
            raise ValueError("max_hops >= 0 and max_k, neighbour_cap, max_nodes >= 1")
        if not 0 < self.min_followups <= self.max_followups:
            raise ValueError("need 0 < min_followups <= max_followups")
        if not 0.0 <= self.dense_share <= 1.0:
            raise ValueError("dense_share must be in [0, 1]")
