"""`rewrite`: Unicode normalisation, then spelling correction against the corpus vocabulary.

A word is corrected only when the corpus has never seen it. It is left alone
when it is a stopword, a number, code-like (digits, `_`, camelCase, dotted or
slashed, an acronym of 2–5 capitals), shorter than 3 letters, or from a script
without letter case.
The edit budget follows Elasticsearch's `fuzziness: AUTO` (1 edit for 3–5
letters, 2 beyond), and the replacement is the nearest vocabulary word, then
the most frequent (SymSpell's rule). A replacement is never a stopword, and a
word that is an inflection of its replacement ("indexes" for "index": same
stem plus an English ending) is kept, since the index already matches it.
"""

from __future__ import annotations

import re

from rcpkit.engine.transform._distance import edit_distance
from rcpkit.engine.transform._text import (
    WORD,
    is_code_like,
    is_stopword,
    match_case,
    normalize_query,
    stems,
)
from rcpkit.engine.transform._types import Corpus, TransformContext, Transformed

__all__ = ["correct_word", "rewrite", "rewrite_query"]

_CHUNK = re.compile(r"\S+")
_INFLECTIONS = ("s", "es", "ed", "d", "ing", "er", "ers", "est", "ly")


def _edit_budget(word: str, max_distance: int) -> int:
    if len(word) < 3:
        return 0
    return min(1 if len(word) <= 5 else 2, max_distance)


def _correctable(word: str) -> bool:
    # Scripts without case (CJK, Thai...) have no word-level edit model here.
    return word.isalpha() and word != word.upper() and not is_stopword(word)


def _inflection_of(word: str, candidate: str) -> bool:
    # "indexes" for "index": the index already matches it, and the user meant the
    # plural. "automobil" for "automobile" stems the same too, but is a misspelling.
    if stems(word) != stems(candidate):
        return False
    bases = (candidate, candidate[:-1]) if candidate.endswith("e") else (candidate,)
    return any(word == base + ending for base in bases for ending in _INFLECTIONS)


def correct_word(word: str, corpus: Corpus, max_distance: int = 2) -> str:
    """`word`, or the vocabulary word it is most likely a misspelling of, in its case."""
    folded = word.casefold()
    budget = _edit_budget(folded, max_distance)
    if budget == 0 or not _correctable(folded) or corpus.document_frequency(folded) > 0:
        return word
    best: tuple[int, int, str] | None = None
    for candidate, df in corpus.words_like(folded, budget):
        if df <= 0 or candidate == folded or not _correctable(candidate):
            continue
        distance = edit_distance(folded, candidate, budget)
        if distance <= budget and (best is None or (distance, -df, candidate) < best):
            best = (distance, -df, candidate)
    if best is None or _inflection_of(folded, best[2]):
        return word
    return match_case(word, best[2])


def rewrite_query(query: str, corpus: Corpus, max_distance: int = 2) -> str:
    """The normalised query with each out-of-vocabulary word corrected in place."""
    corrected: dict[str, str] = {}

    def word(match: re.Match[str]) -> str:
        text = match.group()
        if text not in corrected:
            corrected[text] = correct_word(text, corpus, max_distance)
        return corrected[text]

    def chunk(match: re.Match[str]) -> str:
        text = match.group()
        return text if is_code_like(text) else WORD.sub(word, text)

    return _CHUNK.sub(chunk, normalize_query(query))


def rewrite(query: str, limit: int, context: TransformContext) -> Transformed:
    """One query: normalised and spelling-corrected (`limit` is not used)."""
    rewritten = rewrite_query(query, context.corpus, context.options.max_distance)
    return Transformed(queries=[rewritten], hypothetical=None, rewritten=rewritten)
