"""The lexical analyzer: Unicode word tokens, case folding, English stopwords, Snowball stems.

Text is analyzed in Python and stored as space-joined terms in SQLite FTS5,
so the index and the query always go through exactly this code.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import Stemmer

__all__ = ["analyze", "analyze_many", "fts_query", "surface_words"]

_WORD = re.compile(r"\w+", re.UNICODE)
# A compact English stopword list (Lucene's default set plus a few question words).
_STOPWORDS = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their "
        "then there these they this to was will with what which who whom how why when where "
        "does do did can could would should has have had been being i you we he she its our"
    ).split()
)
_MAX_TERM = 64  # longer "words" are noise (hashes, base64) and bloat the index


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def analyze(text: str) -> list[str]:
    """Terms of ``text``: NFKC, case-folded, stopwords dropped, stemmed."""
    return analyze_many([text])[0]


def analyze_many(texts: Sequence[str]) -> list[list[str]]:
    """Batch-first analysis (the stemmer is called once per text, not per word)."""
    stem = _stemmer().stemWords
    out = []
    for text in texts:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
        kept = [word for word in words if word not in _STOPWORDS and len(word) <= _MAX_TERM]
        out.append(stem(kept))
    return out


def surface_words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text``, unstemmed (the corpus vocabulary)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return {word for word in words if len(word) <= _MAX_TERM}


def fts_query(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing the terms, each quoted (no FTS syntax reaches SQLite)."""
    unique = dict.fromkeys(term.replace('"', '""') for term in terms)
    if not unique:
        return None
    return " OR ".join(f'"{term}"' for term in unique)
