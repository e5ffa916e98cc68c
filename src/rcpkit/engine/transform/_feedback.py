"""RM3 pseudo-relevance feedback: a query model from the top passages (Abdul-Jaleel et al., 2004).

The relevance model is P(w|R) = Σ_D P(w|D)·P(D|Q) over the feedback passages.
`Corpus.search` returns texts without scores, so P(D|Q) is a rank prior
1/(rank+1); each feedback word is also weighted by its BM25 idf, which keeps
frequent but uninformative words out. RM3 then interpolates with the original
query: P'(w) = λ·P(w|Q) + (1−λ)·P(w|R). As in Terrier's query expansion, a
candidate must occur in at least `min_documents` (2) of the feedback passages
(or in all of them when there are fewer).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from rcpkit.engine.transform._text import content_words, stem
from rcpkit.engine.transform._types import Corpus

__all__ = ["idf", "relevance_model"]

_MAX_WORD = 30  # longer "words" in passages are identifiers and hashes, not vocabulary


def idf(df: int, total: int) -> float:
    """BM25's idf, always positive: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    df = min(max(df, 1), max(total, 1))
    return math.log1p((max(total, 1) - df + 0.5) / (df + 0.5))


def _feedback_words(passage: str) -> list[str]:
    return [w for w in content_words(passage) if w.isalpha() and 3 <= len(w) <= _MAX_WORD]


def _passage_model(passages: Sequence[str], min_documents: int) -> dict[str, float]:
    model: dict[str, float] = {}
    documents: Counter[str] = Counter()
    for rank, passage in enumerate(passages):
        words = _feedback_words(passage)
        prior = 1.0 / (rank + 1)
        for word, count in Counter(words).items():
            model[word] = model.get(word, 0.0) + prior * count / len(words)
            documents[word] += 1
    # Terrier's `expansion.mindocuments`: a word seen in one feedback passage only
    # is more often that passage's idiosyncrasy than the topic's vocabulary.
    least = min(min_documents, len(passages))
    return {word: weight for word, weight in model.items() if documents[word] >= least}


def relevance_model(
    query: str,
    passages: Sequence[str],
    corpus: Corpus,
    expansion_terms: int,
    original_query_weight: float,
    min_documents: int = 2,
) -> list[tuple[str, float]]:
    """The interpolated RM3 model: query words, then the best `expansion_terms` others.

    Feedback words must occur in `min_documents` passages (all, if there are
    fewer). Those that stem like a query word merge into the query word; other
    words sharing a stem merge into their most weighted surface form. Weights
    sum to 1; ties order by word, so the result is deterministic.
    """
    query_words = content_words(query)
    if not query_words:
        return []
    total = corpus.total_documents()
    feedback = _passage_model(passages, min_documents)
    for word in feedback:
        feedback[word] *= idf(corpus.document_frequency(word), total)
    mass = sum(feedback.values()) or 1.0
    by_stem: dict[str, tuple[str, float]] = {}
    for word, count in Counter(query_words).items():
        surface, prior = by_stem.get(stem(word), (word, 0.0))
        by_stem[stem(word)] = (surface, prior + original_query_weight * count / len(query_words))
    query_stems = set(by_stem)
    for word, weight in sorted(feedback.items(), key=lambda item: (-item[1], item[0])):
        key = stem(word)
        surface, prior = by_stem.get(key, (word, 0.0))
        by_stem[key] = (surface, prior + (1.0 - original_query_weight) * weight / mass)
    original = [by_stem[key] for key in dict.fromkeys(stem(word) for word in query_words)]
    expansions = sorted(
        (entry for key, entry in by_stem.items() if key not in query_stems and entry[1] > 0),
        key=lambda item: (-item[1], item[0]),
    )[:expansion_terms]
    kept = original + expansions
    norm = sum(weight for _, weight in kept) or 1.0
    return [(word, weight / norm) for word, weight in kept]
