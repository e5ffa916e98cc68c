"""`step-back`: a broader query, made by dropping the specific constraints of the question.

Dropped: quoted strings; numbers (digits or spelled out), years, dates,
ordinals and percentages; the unit of a quantity ("5 K", "10 years"); month
and weekday names next to a number; named entities, detected as capitalised
words (and their "of"/"de" connectors) after the start of a sentence, plus a
capitalised first word that begins such a run; superlatives ("best", "most",
"-iest"). A preposition, article or conjunction left without its object goes
too ("in 2023", "at 5 K"). Acronyms and code-like tokens (BM25, HNSW) are kept: they
usually name the core concept. The result is never empty: when no content
word survives, it falls back to the query's last run of content words (its
head noun phrase), then to the query itself.
"""

from __future__ import annotations

import re

from rcpkit.engine.transform._lexicon import (
    ARTICLES,
    COORDINATORS,
    MONTHS,
    NUMBER_WORDS,
    PREPOSITIONS,
    SUPERLATIVES,
    UNITS,
    WEEKDAYS,
    WH_WORDS,
)
from rcpkit.engine.transform._text import (
    Token,
    content_words,
    is_number,
    is_stopword,
    normalize_query,
    tokens,
)
from rcpkit.engine.transform._types import Merge, TransformContext, Transformed

__all__ = ["step_back", "step_back_query"]

_QUOTED = re.compile(r"\"[^\"]+\"|“[^”]+”|‘[^’]+’|«[^»]+»|(?<!\w)'[^']+'(?!\w)")
_SYMBOLS = frozenset("$€£¥%#")
_CONNECTORS = frozenset({"of", "the", "de", "du", "da", "von", "van", "der", "la", "le", "&"})
_SENTENCE_MARKS = frozenset(".?!:;")
_IEST = re.compile(r"\w{2,}iest", re.IGNORECASE)


def _titled(token: Token) -> bool:
    text = token.text
    return text[:1].isupper() and any(char.islower() for char in text) and text != "I"


def _mark_entities(found: list[Token], drop: list[bool]) -> None:
    starts = [i == 0 or found[i - 1].text in _SENTENCE_MARKS for i in range(len(found))]
    entity = [_titled(t) and not starts[i] for i, t in enumerate(found)]
    for i in range(len(found) - 1):  # "Estella Leopold went …": the run starts the sentence
        if starts[i] and _titled(found[i]) and entity[i + 1] and not is_stopword(found[i].text):
            entity[i] = True
    for i in range(1, len(found) - 1):
        if found[i].text.casefold() in _CONNECTORS and entity[i - 1] and entity[i + 1]:
            entity[i] = True
    for i, is_entity in enumerate(entity):
        drop[i] = drop[i] or is_entity
        if is_entity and i > 0 and found[i - 1].text.casefold() in ARTICLES:
            drop[i - 1] = True  # "the Bank of England" goes whole


def _mark_specifics(query: str, found: list[Token], drop: list[bool]) -> None:
    quoted = [m.span() for m in _QUOTED.finditer(query)]
    numbers = [is_number(t.text) or t.text.casefold() in NUMBER_WORDS for t in found]
    for i, token in enumerate(found):
        word = token.text.casefold()
        near_number = (i > 0 and numbers[i - 1]) or (i + 1 < len(found) and numbers[i + 1])
        drop[i] = (
            drop[i]
            or numbers[i]
            or any(start <= token.start and token.end <= end for start, end in quoted)
            or (token.text in _SYMBOLS and near_number)
            or (i > 0 and numbers[i - 1] and word in UNITS)
            or (word in MONTHS | WEEKDAYS and near_number)
            or word in SUPERLATIVES
            or _IEST.fullmatch(token.text) is not None
        )


def _orphaned(found: list[Token], drop: list[bool], i: int) -> bool:
    """True when the grammar word at `i` lost what it governed."""
    word = found[i].text.casefold()
    if word not in PREPOSITIONS | ARTICLES | COORDINATORS:
        return False
    j, skipped = i + 1, False
    while j < len(found) and drop[j]:
        j, skipped = j + 1, True
    if not skipped:
        return False
    if j == len(found) or not found[j].text[:1].isalnum():
        return True
    following = found[j].text.casefold()
    return following in PREPOSITIONS | COORDINATORS | WH_WORDS or word in COORDINATORS


def _mark_orphans(found: list[Token], drop: list[bool]) -> None:
    changed = True
    while changed:
        changed = False
        for i in range(len(found)):
            if not drop[i] and _orphaned(found, drop, i):
                drop[i] = changed = True


def _render(query: str, found: list[Token], drop: list[bool]) -> str:
    pieces: list[str] = []
    previous_end = None
    for token, dropped in zip(found, drop, strict=True):
        if dropped:
            previous_end = -1
            continue
        spaced = previous_end is None or previous_end == -1 or previous_end < token.start
        pieces.append((" " if spaced and pieces else "") + token.text)
        previous_end = token.end
    text = "".join(pieces)
    text = re.sub(r"\(\s*\)|\[\s*\]", "", text)
    text = re.sub(r"\s+([,;:?.!])", r"\1", text)
    text = re.sub(r"[,;:]+(?=\s*(?:[,;:?.!]|$))", "", text)
    return " ".join(text.strip(" ,;:.").split()) if text.strip(" ?!.,;:") else ""


def _head_noun_phrase(found: list[Token]) -> str:
    runs: list[list[str]] = [[]]
    for token in found:
        if token.text[:1].isalnum() and not is_stopword(token.text) and not is_number(token.text):
            runs[-1].append(token.text)
        elif runs[-1]:
            runs.append([])
    return " ".join(next((run for run in reversed(runs) if run), []))


def step_back_query(query: str) -> str:
    """The query without its specific constraints (see the module docstring)."""
    query = normalize_query(query)
    found = tokens(query)
    drop = [False] * len(found)
    _mark_specifics(query, found, drop)
    _mark_entities(found, drop)
    _mark_orphans(found, drop)
    broader = _render(query, found, drop)
    if content_words(broader):
        return broader
    return _head_noun_phrase(found) or query


def step_back(query: str, limit: int, context: TransformContext) -> Transformed:
    """[broader query, original query] (the original only once when nothing was dropped)."""
    query = normalize_query(query)
    broader = step_back_query(query)
    queries = [broader] if broader == query or limit < 2 else [broader, query]
    merge: Merge = "rrf" if len(queries) > 1 else "single"
    return Transformed(queries=queries, hypothetical=None, rewritten=broader, merge=merge)
