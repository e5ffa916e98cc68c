"""Entity keys: the normal form two mentions must share to be one graph node.

casefold + NFKC, possessive and edge punctuation stripped, leading determiners
dropped, inner punctuation collapsed to spaces, and (for common nouns only) the
head word singularised so "sledges" and "sledge" meet. Proper names are never
singularised: "Paris" must not become "pari".
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["DETERMINERS", "normalize_key", "singular"]

#: Words dropped from the front of a phrase ("the South Pole" → "south pole").
DETERMINERS: Final = frozenset(
    """
    a an the this that these those its their his her our my your some any each every
    all both no another such which what whose several many much few
    """.split()
)

_INNER_PUNCTUATION: Final = re.compile(r"[^\w\s'-]+|_+", re.UNICODE)
_POSSESSIVE: Final = re.compile(r"['’]s\b|(?<=s)['’](?=\s|$)")
_SPACES: Final = re.compile(r"\s+")
_INVARIANT_ENDINGS: Final = ("ss", "us", "is", "ics", "sis", "xis")


def singular(word: str) -> str:
    """English plural → singular by suffix rules (a light stemmer, not a lemmatiser)."""
    if len(word) <= 3 or not word.isalpha() or word.endswith(_INVARIANT_ENDINGS):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("'s"):
        return word[:-1]
    return word


def normalize_key(text: str, *, singularize: bool = False) -> str:
    """The entity key of a surface form; "" when nothing content-bearing is left."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    folded = _POSSESSIVE.sub("", folded)
    folded = _INNER_PUNCTUATION.sub(" ", folded)
    tokens = [token.strip("'-") for token in _SPACES.split(folded)]
    tokens = [token for token in tokens if token]
    while tokens and tokens[0] in DETERMINERS:
        tokens.pop(0)
    if not tokens or all(token.isdigit() for token in tokens):
        return ""
    if singularize:
        tokens[-1] = singular(tokens[-1])
    key = " ".join(tokens)
    return key if len(key) > 1 else ""
