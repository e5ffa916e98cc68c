"""A deterministic, dependency-free extractor for fast tests and as a fallback.

Entities are runs of capitalised words ("Roald Amundsen", "University of Oslo")
and lower-case content-word bigrams that recur in at least `min_bigram_texts`
texts of the same batch ("copper sulfate"). No model: it knows nothing of
types beyond NAME and PHRASE, and a bigram seen in only one text of a batch is
not kept — add related chunks together when that matters.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from rcpkit.engine.graph._normalize import normalize_key
from rcpkit.engine.graph._text import STOP_WORDS, sentence_spans
from rcpkit.engine.graph._types import PHRASE_LABEL, Extraction, Mention

__all__ = ["NAME_LABEL", "RegexExtractor"]

#: The label of a capitalised-span entity (the regex extractor cannot type it further).
NAME_LABEL: Final = "NAME"

_TOKEN: Final = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_CONNECTORS: Final = frozenset({"of", "de", "da", "van", "von", "la", "le", "del", "der", "du"})
_TITLES: Final = frozenset({"dr", "mr", "mrs", "ms", "prof", "sir", "st"})


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    start: int
    end: int
    sentence: int
    first: bool  # first token of its sentence


class RegexExtractor:
    """Capitalised spans + batch-frequent bigrams; same batch in, same mentions out."""

    def __init__(self, min_bigram_texts: int = 2) -> None:
        if min_bigram_texts < 1:
            raise ValueError("min_bigram_texts must be >= 1")
        self._min_bigram_texts = min_bigram_texts

    @property
    def identity(self) -> str:
        """The method and its one parameter."""
        return f"rcpkit-regex-v1:{self._min_bigram_texts}"

    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        """One `Extraction` per text, in input order."""
        sentences = [tuple(sentence_spans(text)) for text in texts]
        tokens = [_tokens(text, spans) for text, spans in zip(texts, sentences, strict=True)]
        lower_words = {t.text.casefold() for row in tokens for t in row if t.text.islower()}
        names = [_names(row, lower_words) for row in tokens]
        taken = [
            {index for mention in row for index in range(mention.start, mention.end)}
            for row in names
        ]
        candidates = [_bigrams(row, used) for row, used in zip(tokens, taken, strict=True)]
        frequency = Counter(key for row in candidates for key in {m.key for m in row})
        return [
            Extraction(
                spans,
                tuple(
                    sorted(
                        [*found, *(m for m in row if frequency[m.key] >= self._min_bigram_texts)],
                        key=lambda m: (m.start, m.end),
                    )
                ),
            )
            for spans, found, row in zip(sentences, names, candidates, strict=True)
        ]


def _tokens(text: str, sentences: Sequence[tuple[int, int]]) -> list[_Token]:
    found: list[_Token] = []
    for index, (start, end) in enumerate(sentences):
        for number, match in enumerate(_TOKEN.finditer(text, start, end)):
            found.append(_Token(match.group(), match.start(), match.end(), index, number == 0))
    return found


def _capitalised(token: _Token) -> bool:
    return token.text[0].isupper() and token.text.casefold() not in _TITLES


def _names(tokens: Sequence[_Token], lower_words: set[str]) -> list[Mention]:
    mentions: list[Mention] = []
    index = 0
    while index < len(tokens):
        if not _capitalised(tokens[index]):
            index += 1
            continue
        run = [tokens[index]]
        index += 1
        while index < len(tokens) and tokens[index].sentence == run[0].sentence:
            token = tokens[index]
            follows = index + 1 < len(tokens) and _capitalised(tokens[index + 1])
            if _capitalised(token) or (token.text in _CONNECTORS and follows):
                run.append(token)
                index += 1
            else:
                break
        mention = _name_mention(run, lower_words)
        if mention is not None:
            mentions.append(mention)
    return mentions


def _name_mention(run: list[_Token], lower_words: set[str]) -> Mention | None:
    # A sentence-initial capital is only a name if the word never appears in lower case.
    while run and run[0].first and run[0].text.casefold() in STOP_WORDS:
        run = run[1:]
    if not run or run[-1].text in _CONNECTORS:
        return None
    if len(run) == 1 and run[0].first and run[0].text.casefold() in lower_words:
        return None
    surface = " ".join(token.text for token in run)
    key = normalize_key(surface)
    if not key:
        return None
    return Mention(key, surface, NAME_LABEL, run[0].sentence, run[0].start, run[-1].end)


def _bigrams(tokens: Sequence[_Token], taken: set[int]) -> list[Mention]:
    mentions: list[Mention] = []
    for left, right in itertools.pairwise(tokens):
        if left.sentence != right.sentence or left.start in taken or right.start in taken:
            continue
        if not (_content(left.text) and _content(right.text)):
            continue
        surface = f"{left.text} {right.text}"
        key = normalize_key(surface, singularize=True)
        if key:
            mentions.append(
                Mention(key, surface, PHRASE_LABEL, left.sentence, left.start, right.end)
            )
    return mentions


def _content(word: str) -> bool:
    return word.islower() and word.isalpha() and len(word) >= 3 and word not in STOP_WORDS
