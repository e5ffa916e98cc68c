"""Query transformation, the §3.1 transform stage: `query/transform` (§7.8), `retrieve.rewrite`.

No language model is involved; each method is an established non-generative technique:

    `rewrite`      NFKC normalisation + SymSpell-style spelling correction against the
                   corpus's surface vocabulary.
    `multi-query`  RM3 pseudo-relevance-feedback variants, plus dense-neighbour word
                   replacements when an embedder is configured; fused with RRF.
    `decompose`    rule-based splitting of multi-part, comparative and list questions;
                   merged round-robin so every part keeps its best hits.
    `step-back`    rule-based broadening: specific constraints (numbers, dates, entities,
                   quotes, superlatives) dropped.
    `hyde`         an extractive pseudo-document from the top passages' most relevant
                   sentences (PRF), not a generated one.

Entry point: `transform(method, query, corpus, n, neighbours=, options=) -> Transformed`,
dispatching through the `TRANSFORMS` registry; `DESCRIPTIONS` says what each method does.
`n` is bounded by `MAX_QUERIES` (§15.5). `merge_rankings(result.merge, rankings)` turns
one ranking per query back into one (RRF via `rcpkit.protocol.fusion.fuse`, or round-robin).

Inputs: a `Corpus` (df, edit-distance lookup and top-df words over surface words, unit
count, passage search). `VocabularyIndex` is a SymSpell deletion index over
`(word, df)` pairs and `IndexedCorpus` assembles a `Corpus` from one plus a search
function. `DenseNeighbours` holds a bounded, lazily built cache of vocabulary vectors.
"""

from rcpkit.engine.transform._merge import MERGES, merge_rankings
from rcpkit.engine.transform._neighbours import DenseNeighbours, EmbedFunction
from rcpkit.engine.transform._registry import (
    DESCRIPTIONS,
    TRANSFORMS,
    method_named,
    query_bound,
    transform,
)
from rcpkit.engine.transform._types import (
    DEFAULT_QUERIES,
    MAX_QUERIES,
    TRANSFORM_METHODS,
    Corpus,
    Merge,
    SearchFunction,
    TransformContext,
    Transformed,
    TransformFunction,
    TransformMethod,
    TransformOptions,
)
from rcpkit.engine.transform._vocabulary import IndexedCorpus, VocabularyIndex

__all__ = [
    "DEFAULT_QUERIES",
    "DESCRIPTIONS",
    "MAX_QUERIES",
    "MERGES",
    "TRANSFORMS",
    "TRANSFORM_METHODS",
    "Corpus",
    "DenseNeighbours",
    "EmbedFunction",
    "IndexedCorpus",
    "Merge",
    "SearchFunction",
    "TransformContext",
    "TransformFunction",
    "TransformMethod",
    "TransformOptions",
    "Transformed",
    "VocabularyIndex",
    "merge_rankings",
    "method_named",
    "query_bound",
    "transform",
]
