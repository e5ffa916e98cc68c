"""`decompose`: split a multi-part question into one sub-query per part, by surface rules.

Rules, applied in order:

1. Sentences and question marks: "What is X? How is Y built?" gives two parts.
2. Coordinated questions: "What is X and how does it work" splits before the
   second question word; a later part's "it/its/they/them/their" is replaced
   by the first part's topic (the phrase after its copula, else its first run
   of capitalised or code-like words after the opening word).
3. Comparisons: "difference between X and Y ...", "compare X with Y ...",
   "X vs Y ...", "X compared to Y ...", "how does X compare to Y ...": one
   sub-query per side, each carrying the shared predicate (the content words
   before an infix comparison, the modifier after the second side).
4. Lists: "the A, B and C of X" or "the P of A, B and C": one sub-query per item
   with the shared prefix and suffix, when the list is not a bare noun compound
   ("salt and pepper" is left alone, as is anything after "between").

A question with one part returns itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rcpkit.engine.transform._lexicon import COPULAS, PRONOUNS, WH_WORDS
from rcpkit.engine.transform._lists import split_list
from rcpkit.engine.transform._phrases import head_and_suffix, join, prefix_and_tail
from rcpkit.engine.transform._text import (
    content_words,
    is_code_like,
    normalize_query,
    sentences,
    stems,
    tokens,
)
from rcpkit.engine.transform._types import TransformContext, Transformed

__all__ = ["decompose", "sub_questions"]

_COORDINATED = re.compile(
    r"\s*[,;]?\s+(?:and|but|or)\s+(?:also\s+)?(?=(?:" + "|".join(sorted(WH_WORDS)) + r")\b)"
    r"|\s*;\s*",
    re.IGNORECASE,
)
_BETWEEN = re.compile(
    r"\b(?:the\s+)?(?:main\s+|key\s+)?(?:differences?|similarit(?:y|ies)|distinctions?"
    r"|contrasts?)\s+between\s+(?P<rest>.+)",
    re.IGNORECASE,
)
_COMPARE = re.compile(
    r"\b(?:compare|comparing|comparison\s+(?:of|between))\s+(?P<rest>.+)", re.IGNORECASE
)
_COMPARE_SEPARATOR = re.compile(r"\s+(?:with|to|and|against|versus|vs\.?)\s+", re.IGNORECASE)
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_INFIX = re.compile(
    r"\s+(?:vs\.?|versus|compared\s+(?:to|with)|compares?\s+(?:to|with|against)"
    r"|as\s+opposed\s+to)\s+",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(?:" + "|".join(sorted(PRONOUNS)) + r")\b", re.IGNORECASE)


def _clauses(sentence: str) -> list[str]:
    pieces = [piece.strip() for piece in _COORDINATED.split(sentence) if piece.strip()]
    if len(pieces) > 1 and sentence.endswith("?"):
        pieces = [piece if piece[-1] in "?.!" else piece + "?" for piece in pieces]
    return pieces


def _topic(clause: str) -> str | None:
    found = tokens(clause)
    for i, token in enumerate(found[:-1]):
        if token.text.casefold() in COPULAS:
            head, _ = head_and_suffix(clause[found[i + 1].start :], stop_at_of=False)
            if content_words(head):
                return head
    run: list[str] = []
    for token in found[1:]:  # a sentence's first word is capitalised anyway
        if token.text[:1].isupper() or is_code_like(token.text):
            run.append(token.text)
        elif run:
            break
    return " ".join(run) or None


def _resolve_pronouns(clauses: list[str]) -> list[str]:
    topic = _topic(clauses[0]) if len(clauses) > 1 else None
    if topic is None:
        return clauses

    def replace(match: re.Match[str]) -> str:
        return f"{topic}'s" if match.group().casefold() in {"its", "their"} else topic

    return [clauses[0], *(_PRONOUN.sub(replace, clause) for clause in clauses[1:])]


def _sides(rest: str, separator: re.Pattern[str]) -> tuple[str, str, str] | None:
    parts = separator.split(rest, maxsplit=1)
    if len(parts) != 2:
        return None
    second, suffix = head_and_suffix(parts[1], stop_at_of=False)
    first = parts[0].strip(" ,")
    if not (content_words(first) and content_words(second)):
        return None
    return first, second, suffix


def split_comparison(clause: str) -> list[str] | None:
    """One sub-query per side of a comparison, or None when `clause` compares nothing."""
    for pattern, separator in ((_BETWEEN, _AND), (_COMPARE, _COMPARE_SEPARATOR)):
        match = pattern.search(clause)
        if match and (sides := _sides(match.group("rest"), separator)):
            first, second, suffix = sides
            return [join(first, suffix), join(second, suffix)]
    parts = _INFIX.split(clause, maxsplit=1)
    if len(parts) == 2:
        prefix, first = prefix_and_tail(parts[0])
        prefix = prefix if content_words(prefix) else ""  # "How does X compare to Y"
        second, suffix = head_and_suffix(parts[1], stop_at_of=False)
        if content_words(first) and content_words(second):
            return [join(prefix, first, suffix), join(prefix, second, suffix)]
    return None


def sub_questions(query: str) -> list[str]:
    """The parts of `query` by the module's rules, in order, without repeats."""
    clauses = [clause for sentence in sentences(query) for clause in _clauses(sentence)]
    clauses = _resolve_pronouns(clauses) if clauses else []
    parts: list[str] = []
    seen: set[tuple[str, ...]] = set()
    for clause in clauses:
        for part in split_comparison(clause) or split_list(clause) or [clause]:
            key = stems(part)
            if key and key not in seen:
                seen.add(key)
                parts.append(part)
    return parts


def decompose(query: str, limit: int, context: TransformContext) -> Transformed:
    """Sub-queries of a multi-part question (at most `limit`), or the question itself."""
    query = normalize_query(query)
    parts = sub_questions(query)
    notes: Sequence[str] = ()
    if len(parts) > limit:
        notes = (f"decompose: {len(parts)} parts, kept the first {limit}",)
        parts = parts[:limit]
    if len(parts) <= 1:
        single = parts[0] if parts else query  # a repeated question is one part
        return Transformed(queries=[single], hypothetical=None, rewritten=single)
    return Transformed(
        queries=parts,
        hypothetical=None,
        rewritten=" | ".join(parts),
        merge="interleave",
        notes=tuple(notes),
    )
