"""Coordinated lists in a question: "the A, B and C of X" → one question per item."""

from __future__ import annotations

from rcpkit.engine.transform._lexicon import ATTACHING, BOUNDARIES, COPULAS
from rcpkit.engine.transform._phrases import join
from rcpkit.engine.transform._text import Token, content_words, tokens

__all__ = ["split_list"]

_MAX_ITEM = 6  # words in one list item ("the boiling point of mercury")
_HEADS = COPULAS | frozenset({"explain", "define", "describe", "list"})
_RELATIONAL = frozenset({"between", "among", "amongst"})


def _item_word(token: Token) -> bool:
    word = token.text.casefold()
    return token.text[:1].isalnum() and (word == "of" or word not in BOUNDARIES)


def _item_before(found: list[Token], end: int) -> int:
    """Start index of the item ending just before `end` (== `end` when there is none)."""
    start = end
    while start > 0 and end - start < _MAX_ITEM and _item_word(found[start - 1]):
        start -= 1
    while start < end and found[start].text.casefold() == "of":
        start += 1
    return start


def _items(found: list[Token], coordinator: int) -> list[tuple[int, int]] | None:
    end = coordinator + 1
    while end < len(found) and end - coordinator <= _MAX_ITEM and _item_word(found[end]):
        end += 1
    too_long = end < len(found) and _item_word(found[end])
    if too_long or end == coordinator + 1 or found[end - 1].text.casefold() == "of":
        return None
    items = [(coordinator + 1, end)]
    cursor = coordinator - 1 if found[coordinator - 1].text == "," else coordinator
    while True:
        start = _item_before(found, cursor)
        if start == cursor:
            return None
        items.insert(0, (start, cursor))
        if start > 0 and found[start - 1].text == ",":
            cursor = start - 1
            continue
        return items


def _share_of(items: list[str]) -> tuple[str, list[str], str]:
    """Move an "of X" that only the first (or last) item carries into the shared part."""
    has_of = [" of " in f" {item.casefold()} " for item in items]
    if has_of[-1] and not any(has_of[:-1]):
        head, _, tail = items[-1].rpartition(" of ")
        return "", [*items[:-1], head], f"of {tail}"
    if has_of[0] and not any(has_of[1:]):
        head, _, tail = items[0].partition(" of ")
        return f"{head} of", [tail, *items[1:]], ""
    return "", items, ""


def split_list(clause: str) -> list[str] | None:
    """One question per item of the clause's first coordinated list, or None."""
    found = tokens(clause)
    for index, token in enumerate(found):
        if index == 0 or token.text.casefold() not in {"and", "or"}:
            continue
        spans = _items(found, index)
        if spans is None:
            continue
        start, end = found[spans[0][0]].start, found[spans[-1][1] - 1].end
        prefix, suffix = clause[:start].strip(), clause[end:].strip()
        texts = [clause[found[a].start : found[b - 1].end] for a, b in spans]
        inner_prefix, texts, inner_suffix = _share_of(texts)
        before = prefix.rsplit(maxsplit=1)[-1].casefold() if prefix else ""
        after = suffix.split(maxsplit=1)[0].casefold() if suffix else ""
        shared = bool(inner_prefix or inner_suffix) or before in ATTACHING | _HEADS
        if before in _RELATIONAL or not (len(texts) >= 3 or shared or after in ATTACHING):
            continue
        if not all(content_words(text) for text in texts):
            continue
        return [join(prefix, inner_prefix, text, inner_suffix, suffix) for text in texts]
    return None
