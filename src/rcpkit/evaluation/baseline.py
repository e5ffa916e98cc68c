"""Plain BM25 outside rcpkit, computed in the same run so every figure is a ratio to it.

``bm25s`` with the Lucene-style defaults people compare against: k1 = 0.9,
b = 0.4, the Snowball English stemmer, English stop words, title + text as one
field. Nothing of rcpkit's analysis or store is used.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcpkit.evaluation.dataset import Dataset
from rcpkit.evaluation.metrics import Run

__all__ = ["BM25_BASELINE", "Baseline", "bm25_baseline"]


@dataclass(frozen=True, slots=True)
class Baseline:
    k1: float = 0.9
    b: float = 0.4
    language: str = "english"

    @property
    def name(self) -> str:
        return f"bm25s BM25 (k1={self.k1:g}, b={self.b:g}, Snowball {self.language}, stop words)"


BM25_BASELINE = Baseline()


def bm25_baseline(dataset: Dataset, depth: int, baseline: Baseline = BM25_BASELINE) -> Run:
    """The baseline's top ``depth`` matching documents for every query of ``dataset``."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer(baseline.language)
    ids = [document.id for document in dataset.corpus]
    texts = [f"{document.title} {document.text}" for document in dataset.corpus]
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25(k1=baseline.k1, b=baseline.b)
    model.index(tokens, show_progress=False)
    query_ids = list(dataset.queries)
    asked = bm25s.tokenize(
        [dataset.queries[q] for q in query_ids],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    found, scores = model.retrieve(asked, k=min(depth, len(ids)), show_progress=False)
    # bm25s fills the top k with score-0 documents in index order; they do not match.
    return {
        query: {
            ids[index]: float(score) for index, score in zip(rows, values, strict=True) if score > 0
        }
        for query, rows, values in zip(query_ids, found, scores, strict=True)
    }
