"""`hyde`, feedback-based: a pseudo-document assembled from the corpus's own sentences.

HyDE (Gao et al., 2022) embeds an LLM-written answer instead of the question.
With no generator, this builds the pseudo-answer extractively, by
pseudo-relevance feedback: the sentences of the top passages are scored by
the idf mass of the query terms they contain (their stems, so "indexes"
matches "index") times their passage's rank prior 1/(rank+1);
near-duplicates are dropped and the best kept until about
`hypothetical_words` words. Every word of the result is a corpus word; none
is generated.
"""

from __future__ import annotations

from rcpkit.engine.transform._feedback import idf
from rcpkit.engine.transform._text import content_words, normalize_query, sentences, stem, stems
from rcpkit.engine.transform._types import Corpus, TransformContext, Transformed

__all__ = ["hyde", "pseudo_document"]

_DUPLICATE = 0.8  # Jaccard similarity of two sentences' term sets that makes them one


def _query_weights(query: str, corpus: Corpus) -> dict[str, float]:
    total = corpus.total_documents()
    weights: dict[str, float] = {}
    for word in content_words(query):
        key = stem(word)
        weights[key] = max(weights.get(key, 0.0), idf(corpus.document_frequency(word), total))
    return weights


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    union = a | b
    return bool(union) and len(a & b) / len(union) >= _DUPLICATE


def pseudo_document(query: str, passages: list[str], corpus: Corpus, max_words: int) -> str | None:
    """The most query-relevant sentences of `passages`, deduplicated, within `max_words`."""
    weights = _query_weights(query, corpus)
    scored = []
    for rank, passage in enumerate(passages):
        for position, sentence in enumerate(sentences(passage)):
            terms = frozenset(stems(sentence))
            overlap = sum(weight for term, weight in weights.items() if term in terms)
            score = overlap / (rank + 1)  # the same rank prior as RM3's P(D|Q) stand-in
            scored.append((-score, rank, position, sentence, terms))
    if not scored:
        return None
    scored.sort(key=lambda item: item[:3])
    if scored[0][0] < 0:  # some sentence matches: keep only matching ones
        scored = [item for item in scored if item[0] < 0]
    chosen: list[str] = []
    kept_terms: list[frozenset[str]] = []
    words = 0
    for _, _, _, sentence, terms in scored:
        if any(_similar(terms, other) for other in kept_terms):
            continue
        length = len(sentence.split())
        if words and words + length > max_words:
            continue
        if not words and length > max_words:
            sentence = " ".join(sentence.split()[:max_words])
            length = max_words
        chosen.append(sentence)
        kept_terms.append(terms)
        words += length
        if words >= max_words:
            break
    return " ".join(chosen)


def hyde(query: str, limit: int, context: TransformContext) -> Transformed:
    """[query] plus a pseudo-document from the top passages (None when the corpus gave none)."""
    query = normalize_query(query)
    options = context.options
    passages = list(context.corpus.search(query, options.hyde_passages)) if query else []
    hypothetical = pseudo_document(query, passages, context.corpus, options.hypothetical_words)
    notes = () if hypothetical else ("hyde: no passages to build a pseudo-document from",)
    return Transformed(queries=[query], hypothetical=hypothetical, rewritten=query, notes=notes)
