"""Surface text helpers shared by the transforms: normalisation, words, tokens, sentences.

Stopwords and stems come from the engine's own analyzer, so "is this a
stopword" and "do these words match" mean exactly what they mean in the index.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from rcpkit.engine.text.analysis import analyze

__all__ = [
    "WORD",
    "Token",
    "content_words",
    "is_code_like",
    "is_number",
    "is_stopword",
    "match_case",
    "normalize_query",
    "sentences",
    "stem",
    "stems",
    "surface_words",
    "tokens",
]

#: The analyzer's word pattern: a surface word is one `\w+` run.
WORD = re.compile(r"\w+", re.UNICODE)
# A token keeps hyphenated, dotted and apostrophised words whole ("TF-IDF",
# "3.14", "it's", "2023-05-01"); any other non-space character is a token alone.
_TOKEN = re.compile(r"\w+(?:(?:[-'’./:]|,(?=\d{3}\b))\w+)*|[^\w\s]", re.UNICODE)
# Invisible characters that NFKC keeps but no query means: zero-width space,
# soft hyphen, word joiner, byte-order mark. ZWJ/ZWNJ are kept (scripts need them).
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u00ad\u2060\ufeff"))
_NUMBER = re.compile(r"[+-]?\d+(?:[.,:/-]\d+)*(?:st|nd|rd|th|s|k|m|x|%)?", re.IGNORECASE)
_EDGE_PUNCTUATION = "\"'“”‘’()[]{}<>.,;:!?"
_CODE_PUNCTUATION = re.compile(r"\w[./\\:@#$=<>|~+*&^]+\w|[(){}\[\]<>=]|^[-/$@#]")
_MAX_ACRONYM = 5
_CAMEL = re.compile(r"[a-z][A-Z]")
# Sentence ends: terminal punctuation (optionally closing quotes) then space, or a newline.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\s*\n\s*")
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf al fig dr mr mrs ms prof st no approx eq sec ch vol".split()
)


class Token(NamedTuple):
    """A token of a query with its span, so edits keep the rest of the text."""

    text: str
    start: int
    end: int


def normalize_query(text: str) -> str:
    """NFKC, invisible characters dropped, control characters and runs of space as one space."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    text = "".join(" " if unicodedata.category(char) == "Cc" else char for char in text)
    return " ".join(text.split())


def tokens(text: str) -> list[Token]:
    """Words (hyphen/dot/apostrophe joined) and single punctuation marks, with spans."""
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def surface_words(text: str) -> list[str]:
    """The surface words of `text`, in order: NFKC, case-folded, unstemmed."""
    return WORD.findall(unicodedata.normalize("NFKC", text).casefold())


@lru_cache(maxsize=8192)
def stems(text: str) -> tuple[str, ...]:
    """The analyzer's terms for `text` (stopwords dropped, stemmed)."""
    return tuple(analyze(text))


def stem(word: str) -> str:
    """The analyzer's stem of one word, or "" for a stopword."""
    found = stems(word)
    return found[0] if found else ""


def is_stopword(word: str) -> bool:
    """True when the analyzer drops `word` (its stopword list; overlong words too)."""
    return not stems(word)


def content_words(text: str) -> list[str]:
    """Surface words of `text` that are not stopwords, in order, repeats kept."""
    return [word for word in surface_words(text) if not is_stopword(word)]


def is_number(token: str) -> bool:
    """Numbers, ordinals, decades, dates and short quantities: 5, 3.14, 1,000, 3rd, 1990s, 5k."""
    return _NUMBER.fullmatch(token) is not None


def is_code_like(chunk: str) -> bool:
    """Identifiers, versions, paths, acronyms (2-5 capitals): tokens not to spell-correct."""
    core = chunk.strip(_EDGE_PUNCTUATION)
    if not core or "()" in chunk:
        return bool(core)
    if any(char.isdigit() or char == "_" for char in core):
        return True
    if _CAMEL.search(core) or _CODE_PUNCTUATION.search(core):
        return True
    # An acronym (HNSW, NASA); a long all-capitals word is more likely shouting.
    letters = [char for char in core if char.isalpha()]
    return 2 <= len(letters) <= _MAX_ACRONYM and all(char.isupper() for char in letters)


def match_case(template: str, word: str) -> str:
    """`word` in the letter case of `template`: UPPER, Title or lower."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def sentences(text: str) -> list[str]:
    """Sentences of `text`, not split after common abbreviations or initials."""
    pieces = [piece.strip() for piece in _SENTENCE_END.split(text)]
    merged: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if merged and _ends_with_abbreviation(merged[-1]):
            merged[-1] = f"{merged[-1]} {piece}"
        else:
            merged.append(piece)
    return merged


def _ends_with_abbreviation(sentence: str) -> bool:
    if not sentence.endswith("."):
        return False
    last = sentence[:-1].rsplit(maxsplit=1)[-1].casefold() if sentence[:-1].strip() else ""
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())
