"""The PostgreSQL store's SQL BM25 ranks exactly as the embedded store's FTS5 bm25()."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.store.analysis import analyze, analyze_many
from rcpkit.engine.store.base import DocumentRow, NewChunk, Store, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore

WORDS = (
    "retrieval ranking index vector query document chunk token stemming lexical dense sparse "
    "fusion reciprocal rank cosine similarity postgres sqlite server cursor version snapshot "
    "filter tenant metadata title body weighting frequency inverse length average saturation "
    "running runner runs ran quickly quick quicker analysis analyzer analyzing"
).split()


def corpus(seed: int = 7) -> list[tuple[DocumentRow, list[NewChunk]]]:
    """Documents of Zipf-ish random words, several chunks each, some sharing title words."""
    rng = random.Random(seed)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    documents = []
    for d in range(60):
        title = " ".join(rng.choices(WORDS, weights, k=rng.randint(0, 4)))
        bodies = [
            " ".join(rng.choices(WORDS, weights, k=rng.randint(3, 40)))
            for _ in range(rng.randint(1, 4))
        ]
        title_terms = " ".join(analyze(title))
        body_terms = analyze_many(bodies)
        meta = {"year": 2000 + d % 7}
        row = DocumentRow(f"d{d}", title, None, f"d{d}", "text", meta, f"h{d}", " ".join(bodies))
        vector = np.ones(4, np.float32) / 2
        chunks = [
            NewChunk(i, 0, len(text), text, None, None, title_terms, " ".join(terms), vector, meta)
            for i, (text, terms) in enumerate(zip(bodies, body_terms, strict=True))
        ]
        documents.append((row, chunks))
    return documents


@pytest.fixture
def stores(tmp_path, postgres_url: str) -> Iterator[tuple[Store, Store]]:  # type: ignore[no-untyped-def]
    from rcpkit.engine.store.postgres import PostgresStore

    embedded, shared = SQLiteStore(tmp_path / "index.sqlite3"), PostgresStore(postgres_url)
    documents = corpus()
    for start in range(0, len(documents), 20):  # several commits, as indexing does
        batch = WriteBatch(documents=documents[start : start + 20])
        embedded.commit(batch)
        shared.commit(batch)
    yield embedded, shared
    embedded.close()
    shared.close()


def queries(seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(60)]


def assert_same_ranking(
    expected: list[tuple[int, float]], found: list[tuple[int, float]], query: str
) -> None:
    assert len(found) == len(expected), query
    for (key, score), (other_key, other_score) in zip(expected, found, strict=True):
        assert other_score == pytest.approx(score, rel=1e-9, abs=1e-12), query
        if key != other_key:  # only an exact tie may order differently
            assert dict(expected).get(other_key) == pytest.approx(score, rel=1e-9), query


def test_postgres_bm25_equals_fts5_bm25_on_the_same_corpus(stores: tuple[Store, Store]) -> None:
    embedded, shared = stores
    for query in queries():
        terms = analyze(query)
        assert_same_ranking(embedded.lexical(terms, 20), shared.lexical(terms, 20), query)


def test_postgres_bm25_equals_fts5_bm25_under_a_filter(stores: tuple[Store, Store]) -> None:
    embedded, shared = stores
    tree = parse_filter({"field": "year", "op": "lt", "value": 2003}, {"year": "int"}, OPERATORS)
    for query in queries(12)[:20]:
        terms = analyze(query)
        expected = embedded.lexical(terms, 10, tree)
        assert expected or not terms
        assert_same_ranking(expected, shared.lexical(terms, 10, tree), query)


def test_a_title_hit_weighs_twice_a_body_hit_in_both_stores(stores: tuple[Store, Store]) -> None:
    embedded, shared = stores
    terms = analyze("postgres snapshot")
    top = embedded.lexical(terms, 5)
    assert top
    assert_same_ranking(top, shared.lexical(terms, 5), "postgres snapshot")
