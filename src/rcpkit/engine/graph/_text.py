"""Text helpers shared by the extractors and the query side: words, stop words, sentences."""

from __future__ import annotations

import re
from typing import Final

from rcpkit.engine.graph._normalize import singular

__all__ = ["STOP_WORDS", "content_words", "sentence_spans", "terms", "words"]

_WORD: Final = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_SENTENCE_END: Final = re.compile(r"[.!?]+[\"')\]]*\s+")
# Tokens that end in a period without ending a sentence.
_ABBREVIATIONS: Final = frozenset(
    {"dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "fig", "no"}
)

#: A compact English stop list (function words and the commonest fillers).
STOP_WORDS: Final = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either few for
    from further had has have having he her here hers herself him himself his how however i if in
    into is it its itself just me more most my myself neither no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through thus to too under until up
    upon us very was we were what when where which while who whom why will with within without
    would you your yours yourself yourselves must shall may might cannot also
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters/digits, inner hyphens and apostrophes kept)."""
    return _WORD.findall(text.casefold())


def content_words(text: str) -> list[str]:
    """`words` without stop words and one-character tokens, in order."""
    return [word for word in words(text) if word not in STOP_WORDS and len(word) > 1]


def terms(text: str) -> list[str]:
    """Content words, singularised, without repeats, in order: the lexical matching unit."""
    return list(dict.fromkeys(singular(word) for word in content_words(text)))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of `text` (rule-based: `.!?` then whitespace)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()].rsplit(None, 1)
        last = before[-1].casefold().rstrip(".") if before else ""
        if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
            continue  # "Dr. Park", "J. Smith": not a boundary
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [_trimmed(text, begin, end) for begin, end in spans if text[begin:end].strip()]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
