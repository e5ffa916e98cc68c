"""RM3's expansion terms (Lavrenko & Croft 2001), shared by the feedback pass and the hybrid rerank.

``rcpkit.engine.retrieve.prf`` expands the default retrieve's lexical arm with
them; ``rcpkit.engine.rerank._hybrid`` does the same over the passages a
`rerank` is given, so reranking the engine's own candidates ranks them as the
pipeline did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = ["MIN_DOCUMENTS", "expansion_terms"]

MIN_DOCUMENTS = 2  # Terrier's expansion.mindocuments: a term of one passage is its quirk


def expansion_terms(
    query: Sequence[str], passages: Sequence[Sequence[str]], count: int
) -> list[str]:
    """RM3's best ``count`` new terms: Σ_D P(t|D)·P(D|Q) over the ranked feedback passages.

    P(t|D) is the term's share of the passage's analysed terms, P(D|Q) the rank
    prior 1/(rank + 1); a term must occur in two passages (all, if fewer).
    Ties order by term, so the expansion is deterministic.
    """
    model: dict[str, float] = {}
    passages_with: Counter[str] = Counter()
    for rank, terms in enumerate(passages):
        counts = Counter(terms)
        passages_with.update(counts.keys())
        size, prior = len(terms), rank + 1
        for term, times in counts.items():
            model[term] = model.get(term, 0.0) + times / size / prior
    least = min(MIN_DOCUMENTS, len(passages))
    own = set(query)
    kept = [t for t, n in passages_with.items() if n >= least and t not in own]
    return sorted(kept, key=lambda term: (-model[term], term))[:count]
