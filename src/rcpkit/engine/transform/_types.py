"""The shapes every transform trades in: methods, the result, the corpus it reads, options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol, runtime_checkable

__all__ = [
    "DEFAULT_QUERIES",
    "MAX_QUERIES",
    "TRANSFORM_METHODS",
    "Corpus",
    "Merge",
    "Neighbours",
    "SearchFunction",
    "TransformContext",
    "TransformFunction",
    "TransformMethod",
    "TransformOptions",
    "Transformed",
]

#: §7.8 `method` (and §7.7 `rewrite` when not `false`).
TransformMethod = Literal["rewrite", "hyde", "multi-query", "decompose", "step-back"]
TRANSFORM_METHODS: Final[tuple[TransformMethod, ...]] = (
    "rewrite",
    "hyde",
    "multi-query",
    "decompose",
    "step-back",
)

#: §15.5: the fan-out of one transform is bounded whatever `n` a client sends.
MAX_QUERIES: Final = 8
#: §7.8's example `n` for `multi-query` when the client sends none.
DEFAULT_QUERIES: Final = 3

#: How the engine should combine the rankings of `queries` (see `merge_rankings`):
#: one query; reciprocal-rank fusion of variants of one need; or round-robin so
#: each sub-question of a decomposed need keeps its own top hits.
Merge = Literal["single", "rrf", "interleave"]

#: `(query, k) -> texts of the top k passages`, best first.
SearchFunction = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True, slots=True)
class Transformed:
    """What a transform produced: the §7.8 result plus what `retrieve.rewrite` needs."""

    queries: list[str]  # §7.8 `queries`: what to search, best first, at most the bound
    hypothetical: str | None  # §7.8 `hypothetical` (hyde only)
    rewritten: str  # one line for §7.7 `rewrittenQuery`
    merge: Merge = "single"  # how to combine the rankings of `queries`
    # The interpolated RM3 query model (surface word, weight), for engines that
    # can score weighted queries; empty for methods other than multi-query.
    terms: tuple[tuple[str, float], ...] = ()
    notes: tuple[str, ...] = ()  # what was clamped or skipped, for `usage.notes`


@runtime_checkable
class Corpus(Protocol):
    """What the transforms read of the corpus.

    Words are surface words: NFKC, case-folded, unstemmed `\\w+` runs, with
    document frequencies counted per indexed unit (chunk).
    """

    def total_documents(self) -> int:
        """Units (chunks) in the live corpus: the N of idf."""
        ...

    def document_frequency(self, word: str) -> int:
        """Units containing `word` (0 when it is not in the vocabulary)."""
        ...

    def words_like(self, word: str, max_distance: int) -> Sequence[tuple[str, int]]:
        """(word, df) pairs within `max_distance` edits of `word`; a superset is fine."""
        ...

    def frequent_words(self, limit: int) -> Sequence[tuple[str, int]]:
        """The `limit` words with the highest df, as (word, df), highest first."""
        ...

    def search(self, query: str, k: int) -> Sequence[str]:
        """Texts of the top `k` passages for `query`, best first (for feedback)."""
        ...


@dataclass(frozen=True, slots=True)
class TransformOptions:
    """Tuning knobs; the defaults are the usual values from the literature."""

    max_distance: int = 2  # spelling: edits allowed for words longer than 5 letters
    feedback_passages: int = 10  # RM3 fbDocs
    expansion_terms: int = 10  # RM3 fbTerms
    min_feedback_documents: int = 2  # Terrier's expansion.mindocuments
    original_query_weight: float = 0.5  # RM3 λ
    terms_per_variant: int = 3  # expansion terms appended to each PRF variant
    neighbours_per_term: int = 2  # dense replacements tried per query word
    # Cosine a dense neighbour must reach. Word embeddings also place antonyms
    # and co-hyponyms close (MiniLM: car/vehicle 0.87, buy/sell 0.76, cheap/expensive 0.80).
    min_similarity: float = 0.8
    hyde_passages: int = 5  # passages whose sentences make the pseudo-document
    hypothetical_words: int = 120  # cap on the pseudo-document

    def __post_init__(self) -> None:
        if self.max_distance < 0 or self.feedback_passages < 1 or self.hyde_passages < 1:
            raise ValueError("max_distance >= 0 and passage counts >= 1 are required")
        if not 0.0 <= self.original_query_weight <= 1.0:
            raise ValueError("original_query_weight must be in [0, 1]")
        counts = (self.expansion_terms, self.terms_per_variant, self.min_feedback_documents)
        if min(*counts, self.hypothetical_words) < 1:
            raise ValueError("term and word counts must be >= 1")


class Neighbours(Protocol):
    """Dense vocabulary neighbours (``DenseNeighbours`` is the implementation)."""

    def neighbours(
        self, word: str, corpus: Corpus, k: int, min_similarity: float
    ) -> list[tuple[str, float]]: ...


@dataclass(frozen=True, slots=True)
class TransformContext:
    """Everything a transform reads besides the query and its bound."""

    corpus: Corpus
    neighbours: Neighbours | None = None
    options: TransformOptions = field(default_factory=TransformOptions)


#: `(normalised query, query bound, context) -> Transformed`.
TransformFunction = Callable[[str, int, TransformContext], Transformed]
