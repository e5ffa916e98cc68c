"""The lexical analyzer: Unicode word tokens, case folding, English stopwords, Snowball stems.

Text is analyzed in Python and stored as space-joined terms in SQLite FTS5,
so the index and the query always go through exactly this code.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from itertools import filterfalse

import Stemmer

__all__ = [
    "Part",
    "analyze",
    "analyze_code_many",
    "analyze_many",
    "analyze_query",
    "analyze_with_words",
    "fts_query",
    "identifier_parts",
    "remember_terms",
    "remembers",
    "stored_terms",
    "surface_words",
]

_WORD = re.compile(r"\w+", re.UNICODE)
# A compact English stopword list (Lucene's default set plus a few question words).
_STOPWORDS = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their "
        "then there these they this to was will with what which who whom how why when where "
        "does do did can could would should has have had been being i you we he she its our"
    ).split()
)
# An identifier: snake_case (an inner "_") or camelCase (a hump after two lower-case
# letters, or an acronym before a word: "HTTPServer"); "iPhone", "McDonald", "PhD" are not.
_IDENTIFIER = re.compile(r"[^\W_]_+[^\W_]|[a-z]{2}[A-Z]|[A-Z]{2}[a-z]")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[^\W\d_]+|\d+")
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


class Part(str):
    """A query term that is one of an identifier's ``of`` parts (``PostgreSQL`` ->
    ``postgr``, ``sql``): together they weigh one term (``bm25.query_weights``)."""

    of: int

    @classmethod
    def of_word(cls, term: str, of: int) -> Part:
        part = cls(term)
        part.of = of
        return part


def analyze_with_words(
    texts: Sequence[str], code: bool = False
) -> tuple[list[list[str]], list[set[str]]]:
    """Each text's terms (`analyze_many`, or `analyze_code_many` for ``code``) and its
    `surface_words`, for a write that needs both (the index and the vocabulary).

    Prose is scanned once for both: the same words, kept short, are the surface
    words and, without the stopwords, what is stemmed (issue 51.5: an add scanned
    each chunk twice).
    """
    if code:
        return analyze_code_many(texts), [surface_words(text) for text in texts]
    stem = _stemmer().stemWords
    terms, surfaces = [], []
    for text in texts:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
        if words and max(map(len, words)) > _MAX_TERM:  # rare: the check is C-speed
            words = [word for word in words if len(word) <= _MAX_TERM]
        surfaces.append(set(words))
        terms.append(stem(list(filterfalse(_STOPWORDS.__contains__, words))))
    return terms, surfaces


def analyze_code_many(texts: Sequence[str], query: bool = False) -> list[list[str]]:
    """Identifier-aware terms for source code (and for queries, which may name code).

    An identifier yields its whole form (underscores dropped: ``parse_filter`` ->
    ``parsefilter``) and then its parts (``parse``, ``filter``), all stemmed, so
    ``parse_filter``, ``parseFilter`` and "parse filter" all meet it. A word that is
    not an identifier gives exactly what `analyze_many` gives. ``query``: a
    snake_case word also comes first as prose analyses it (``parse_filt``), the
    form a prose row holds, and the parts come as `Part`s.
    """
    stem = _stemmer().stemWords
    out = []
    for text in texts:
        words: list[str] = []
        for word in _WORD.findall(unicodedata.normalize("NFKC", text)):
            if _IDENTIFIER.search(word) is None:
                words.append(word.casefold())
                continue
            if query and "_" in word:
                words.append(word.casefold())  # as a prose-analysed index holds it
            words.append(word.replace("_", "").casefold())
            parts: list[str] = [part.casefold() for part in identifier_parts(word)]
            if query:  # one word's parts weigh one term together (bm25.query_weights)
                parts = [Part.of_word(part, len(parts)) for part in parts]
            words.extend(parts)
        kept = [word for word in words if word not in _STOPWORDS and 0 < len(word) <= _MAX_TERM]
        terms = stem(kept)
        if query:
            terms = [_as(word, term) for word, term in zip(kept, terms, strict=True)]
        out.append(terms)
    return out


def _as(word: str, term: str) -> str:
    """``term`` (the stem of ``word``) a `Part` if ``word`` is one."""
    return Part.of_word(term, word.of) if isinstance(word, Part) else term


class _Remembered:
    """Analysed stored texts by (text, code), the least recently used dropped past ``size``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._held: OrderedDict[tuple[str, bool], tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()  # retrieves run on several threads at once

    def get(self, key: tuple[str, bool]) -> tuple[str, ...] | None:
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
            return found

    def put(self, key: tuple[str, bool], terms: tuple[str, ...]) -> None:
        with self._lock:
            self._held[key] = terms
            self._held.move_to_end(key)
            while len(self._held) > self._size:
                self._held.popitem(last=False)


_STORED = _Remembered(4096)


def stored_terms(text: str, code: bool) -> tuple[str, ...]:
    """The terms of a stored text (`analyze`, or identifier-aware for code), remembered.

    For the passages a retrieve reads again (its feedback passages, the bodies its
    proximity stage reads): popular chunks come back query after query. Keyed by
    the text itself, so a row rewritten under an old key is never mistaken; ``code``
    has no default, so every caller keys a text alike and they share its entry.
    """
    terms = _STORED.get((text, code))
    if terms is None:
        terms = tuple((analyze_code_many if code else analyze_many)([text])[0])
        _STORED.put((text, code), terms)
    return terms


def remember_terms(text: str, code: bool, terms: Sequence[str]) -> None:
    """Give :func:`stored_terms` a text's terms known already (as the index holds them)."""
    _STORED.put((text, code), tuple(terms))


def remembers(text: str, code: bool) -> bool:
    """Whether :func:`stored_terms` holds ``text``'s terms (and so analyses nothing)."""
    return _STORED.get((text, code)) is not None


def analyze_query(text: str) -> list[str]:
    """A query's terms: `analyze` for prose words, identifiers split as in code.

    A snake_case identifier is also kept whole as `analyze` keeps it: a prose row
    that names ``parse_filter`` holds ``parse_filt`` (the index's tokens ``parse``,
    ``filt``), none of the code forms ``parsefilt``, ``pars``, ``filter``.
    """
    return analyze_code_many([text], query=True)[0]


def identifier_parts(word: str) -> list[str]:
    """``parse_filter`` -> parse, filter; ``HTTPServer2`` -> HTTP, Server, 2."""
    return [part for piece in word.split("_") for part in _PART.findall(piece)]


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
