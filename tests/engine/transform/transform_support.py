"""An in-memory corpus with BM25 over the engine's analyzer, and a table embedder.

Not a conftest.py: other test packages import `conftest` by module name.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from rcpkit.engine.models import Vectors
from rcpkit.engine.text.analysis import analyze_many
from rcpkit.engine.transform import IndexedCorpus, VocabularyIndex
from rcpkit.engine.transform._text import WORD


def surface_vocabulary(passages: Sequence[str]) -> Counter[str]:
    """Per-passage document frequency of every surface word (NFKC, case-folded, unstemmed)."""
    counts: Counter[str] = Counter()
    for passage in passages:
        counts.update(set(WORD.findall(unicodedata.normalize("NFKC", passage).casefold())))
    return counts


class Bm25:
    """Okapi BM25 (k1 = 1.2, b = 0.75) over `analyze`, ties broken by passage order."""

    def __init__(self, passages: Sequence[str]) -> None:
        self.passages = list(passages)
        self.terms = [Counter(terms) for terms in analyze_many(self.passages)]
        self.lengths = [sum(terms.values()) for terms in self.terms]
        self.average = sum(self.lengths) / max(1, len(self.lengths))
        self.df = Counter(term for terms in self.terms for term in terms)

    def rank(self, query: str, k: int) -> list[tuple[int, float]]:
        """(passage index, score) of the top `k` passages with a positive score."""
        query_terms = analyze_many([query])[0]
        total = len(self.passages)
        scored = []
        for index, (terms, length) in enumerate(zip(self.terms, self.lengths, strict=True)):
            score = 0.0
            for term in set(query_terms):
                tf = terms.get(term, 0)
                if tf:
                    idf = math.log1p((total - self.df[term] + 0.5) / (self.df[term] + 0.5))
                    norm = tf + 1.2 * (1 - 0.75 + 0.75 * length / self.average)
                    score += idf * tf * 2.2 / norm
            if score > 0:
                scored.append((index, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    def search(self, query: str, k: int) -> list[str]:
        """Texts of the top `k` passages."""
        return [self.passages[index] for index, _ in self.rank(query, k)]


def memory_corpus(passages: Sequence[str]) -> tuple[IndexedCorpus, Bm25]:
    """A `Corpus` over `passages` and the BM25 index it searches with."""
    bm25 = Bm25(passages)
    vocabulary = VocabularyIndex(surface_vocabulary(passages).items())
    return IndexedCorpus(vocabulary, len(passages), bm25.search), bm25


class TableEmbedder:
    """Unit vectors from a word → group table: words of one group are near-identical."""

    def __init__(self, groups: Mapping[str, Sequence[str]], dimension: int = 16) -> None:
        self.groups = {word: i for i, words in enumerate(groups.values()) for word in words}
        self.dimension = dimension
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            group = self.groups.get(text.casefold())
            own = sum(map(ord, text)) % (self.dimension // 2) + self.dimension // 2
            rows[row, own] = 0.3
            if group is not None:
                rows[row, group % (self.dimension // 2)] = 1.0
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return rows
