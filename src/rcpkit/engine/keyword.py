"""A small in-memory BM25 engine for protocol tests and benchmarks.

Pure Python, no models: Okapi BM25 (k1=1.2, b=0.75) over a Unicode-aware
lower-cased word tokenizer. ``rcpkit serve --engine keyword --sample``
serves it over the bundled samples.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["KeywordIndex", "ScoredDocument", "StoredDocument", "tokenize"]

_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "what",
        "which",
        "how",
        "why",
        "when",
        "who",
        "does",
        "do",
    ]
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without English stopwords."""
    return [token for token in _WORD.findall(text.casefold()) if token not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class StoredDocument:
    id: str
    text: str
    title: str | None = None
    source: str | None = None
    meta: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScoredDocument:
    document: StoredDocument
    score: float


class KeywordIndex:
    """Documents with BM25 postings; thread-safe for concurrent reads and writes."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self._k1 = k1
        self._b = b
        self._documents: dict[str, StoredDocument] = {}
        self._terms: dict[str, Counter[str]] = {}
        self._postings: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        self._version = 0

    @property
    def version(self) -> int:
        """Increments on every committed write."""
        return self._version

    def __len__(self) -> int:
        return len(self._documents)

    def upsert(self, documents: Iterable[StoredDocument]) -> None:
        """Add or replace documents by id (§7.10: re-adding an id replaces it)."""
        with self._lock:
            for document in documents:
                self._remove(document.id)
                terms = Counter(tokenize(f"{document.title or ''} {document.text}"))
                self._documents[document.id] = document
                self._terms[document.id] = terms
                for term in terms:
                    self._postings.setdefault(term, set()).add(document.id)
            self._version += 1

    def delete(self, ids: Iterable[str]) -> int:
        """Remove documents; returns how many existed (§7.11)."""
        with self._lock:
            removed = sum(self._remove(id) for id in ids)
            if removed:
                self._version += 1
            return removed

    def _remove(self, id: str) -> bool:
        if self._documents.pop(id, None) is None:
            return False
        for term in self._terms.pop(id):
            postings = self._postings[term]
            postings.discard(id)
            if not postings:
                del self._postings[term]
        return True

    def search(
        self, query: str, k: int, checkpoint: Callable[[], None] | None = None
    ) -> list[ScoredDocument]:
        """The top ``k`` documents by BM25; ``checkpoint`` is called between terms."""
        with self._lock:
            documents = dict(self._documents)
            lengths = {id: sum(terms.values()) for id, terms in self._terms.items()}
            terms_of = dict(self._terms)
            postings = {term: set(ids) for term, ids in self._postings.items()}
        if not documents:
            return []
        average = sum(lengths.values()) / len(lengths)
        scores: dict[str, float] = {}
        for term in set(tokenize(query)):
            if checkpoint is not None:
                checkpoint()
            matching = postings.get(term, set())
            if not matching:
                continue
            idf = math.log(1 + (len(documents) - len(matching) + 0.5) / (len(matching) + 0.5))
            for id in matching:
                frequency = terms_of[id][term]
                norm = self._k1 * (1 - self._b + self._b * lengths[id] / average)
                gain = idf * frequency * (self._k1 + 1) / (frequency + norm)
                scores[id] = scores.get(id, 0.0) + gain
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [ScoredDocument(documents[id], score) for id, score in ranked]
