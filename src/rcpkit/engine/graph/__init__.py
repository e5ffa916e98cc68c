"""The knowledge-graph layer behind `graph` (§7.9) and graph units of `retrieve` (§7.7.2).

No LLM anywhere: entities come from named-entity recognition and noun phrases,
relations are co-occurrence, summaries are extractive.

Extraction (`Extractor` protocol, batch-first):
    `SpacyExtractor` — spaCy NER + noun-phrase keys (`noun_phrases` = "pos", "parser"
    or "none", see `NOUN_PHRASES`); `RegexExtractor` — capitalised spans + batch-frequent
    bigrams, deterministic and dependency-free, for fast tests. Keys are normalised by
    `normalize_key` (casefold, determiners and punctuation stripped, plural heads merged).

Graph (`KnowledgeGraph`, one SQLite file):
    nodes are entities, edges co-occurrence within a sentence (strong) or a chunk (weak),
    weighted by a strategy in `EDGE_WEIGHTINGS` (default LMI, count × PMI); mentions keep
    chunk keys and sentence spans. `add_chunks` / `remove_chunks` are incremental and
    atomic per call. Communities are hierarchical (`COMMUNITY_METHODS`: Leiden from
    igraph, else Louvain from networkx; level 0 the finest, size-bounded) with titles and
    extractive summaries, recomputed lazily after writes.

Queries (bounded: hops ≤ `GraphConfig.max_hops`, capped neighbourhoods, §15.5):
    `local` — seeds by string and dense name match, personalised PageRank, results as
    node / triplet / path / subgraph / chunk with provenance; `global_search` — community
    summaries map-scored, top sentences reduced; `drift` — local + follow-up queries;
    `communities` (paginated, §10) and `neighbors`. Results are the frozen dataclasses
    of `_results`.
"""

from rcpkit.engine.graph._communities import COMMUNITY_METHODS
from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._graph import Embed, KnowledgeGraph
from rcpkit.engine.graph._normalize import normalize_key
from rcpkit.engine.graph._regex_extractor import NAME_LABEL, RegexExtractor
from rcpkit.engine.graph._results import (
    LOCAL_UNITS,
    CommunityInfo,
    CommunityPage,
    DriftResult,
    EdgeRef,
    EntityInfo,
    GlobalResult,
    GraphHit,
    Lineage,
    LocalResult,
    NeighborsResult,
    ScoredCommunity,
    ScoredEntity,
    Seed,
    Unit,
)
from rcpkit.engine.graph._spacy_extractor import NOUN_PHRASES, SpacyExtractor
from rcpkit.engine.graph._types import PHRASE_LABEL, Extraction, Extractor, Mention
from rcpkit.engine.graph._weights import EDGE_WEIGHTINGS

__all__ = [
    "COMMUNITY_METHODS",
    "EDGE_WEIGHTINGS",
    "LOCAL_UNITS",
    "NAME_LABEL",
    "NOUN_PHRASES",
    "PHRASE_LABEL",
    "CommunityInfo",
    "CommunityPage",
    "DriftResult",
    "EdgeRef",
    "Embed",
    "EntityInfo",
    "Extraction",
    "Extractor",
    "GlobalResult",
    "GraphConfig",
    "GraphHit",
    "KnowledgeGraph",
    "Lineage",
    "LocalResult",
    "Mention",
    "NeighborsResult",
    "RegexExtractor",
    "ScoredCommunity",
    "ScoredEntity",
    "Seed",
    "SpacyExtractor",
    "Unit",
    "normalize_key",
]
