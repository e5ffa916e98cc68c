"""Phrase boundaries for the structural transforms: where a noun phrase starts and ends."""

from __future__ import annotations

import re

from rcpkit.engine.transform._lexicon import BOUNDARIES, SUFFIX_STARTERS, WH_WORDS
from rcpkit.engine.transform._text import tokens

__all__ = ["head_and_suffix", "join", "prefix_and_tail"]

_CLOSING = frozenset(",;:?.!")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,;:?.!])")


def head_and_suffix(text: str, *, stop_at_of: bool) -> tuple[str, str]:
    """Split `text` before the first word or mark that starts a modifier ("for …", "?")."""
    stops = SUFFIX_STARTERS | WH_WORDS | ({"of"} if stop_at_of else set())
    for token in tokens(text):
        if token.text in _CLOSING or token.text.casefold() in stops:
            return text[: token.start].strip(), text[token.start :].strip()
    return text.strip(), ""


def prefix_and_tail(text: str) -> tuple[str, str]:
    """Split `text` after its last grammar word or mark: (shared prefix, final noun phrase)."""
    found = tokens(text)
    start = len(found)
    while start > 0:
        word = found[start - 1].text
        if word in _CLOSING or not word[:1].isalnum() or word.casefold() in BOUNDARIES:
            break
        start -= 1
    if start == len(found):
        return text.strip(), ""
    cut = found[start].start
    return text[:cut].strip(), text[cut:].strip()


def join(*pieces: str) -> str:
    """Pieces joined by single spaces, without space before punctuation or stray edges."""
    text = " ".join(piece.strip() for piece in pieces if piece.strip())
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text).strip(" ,;:")
    return re.sub(r"[,;:]+([?.!])$", r"\1", text)
