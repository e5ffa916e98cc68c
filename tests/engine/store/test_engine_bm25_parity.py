"""The PostgreSQL store's SQL BM25 ranks exactly as the embedded store's, for any parameters."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.store.base import DocumentRow, NewChunk, Store, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore
from rcpkit.engine.text.analysis import analyze, analyze_many

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
        assert_same_ranking(
            embedded.index.lexical(terms, 20), shared.index.lexical(terms, 20), query
        )


def test_postgres_bm25_equals_fts5_bm25_under_a_filter(stores: tuple[Store, Store]) -> None:
    embedded, shared = stores
    tree = parse_filter({"field": "year", "op": "lt", "value": 2003}, {"year": "int"}, OPERATORS)
    for query in queries(12)[:20]:
        terms = analyze(query)
        expected = embedded.index.lexical(terms, 10, tree)
        assert expected or not terms
        assert_same_ranking(expected, shared.index.lexical(terms, 10, tree), query)


def test_a_title_hit_outweighs_a_body_hit_in_both_stores(stores: tuple[Store, Store]) -> None:
    embedded, shared = stores
    terms = analyze("postgres snapshot")
    top = embedded.index.lexical(terms, 5)
    assert top
    assert_same_ranking(top, shared.index.lexical(terms, 5), "postgres snapshot")


def _tenants_and_retirements(stores: Sequence[Store]) -> list[int]:
    """Two tenants' corpora, then upserts and deletes in each: the versions committed."""
    documents = corpus(seed=3)
    versions = []
    for tenant in ("", "acme"):
        chosen = documents if tenant else documents[:30]
        for start in range(0, len(chosen), 15):
            batch = WriteBatch(documents=chosen[start : start + 15], tenant=tenant or None)
            committed = {store.commit(batch).version for store in stores}
            assert len(committed) == 1
            versions.append(committed.pop())
    replaced = corpus(seed=5)[:10]  # d0..d9 again, other words: the old copies retire
    for tenant in ("", "acme"):
        for store in stores:
            store.commit(WriteBatch(documents=replaced, tenant=tenant or None))
            store.index.lexical(["query"], 1)  # a read between commits: the mirror follows them
            store.commit(WriteBatch(delete=[f"d{i}" for i in range(20, 26)], tenant=tenant or None))
            store.index.lexical(["query"], 1)
    return versions


# FTS5's constants, and others: k1, b and the title weight are settings (issue 16).
PARAMETERS = [
    None,
    {"k1": 1.2, "b": 0.75, "title_weight": 2.0},  # FTS5's bm25(chunks_fts, 2.0, 1.0)
    {"k1": 0.9, "b": 0.4, "title_weight": 3.0},
    {"k1": 2.0, "b": 0.9, "title_weight": 1.0},
    {"k1": 1.5, "b": 0.6, "title_weight": 1.25, "body_weight": 0.75},
]


@pytest.mark.parametrize("bm25", PARAMETERS, ids=lambda p: "default" if p is None else str(p))
def test_bm25_per_tenant_with_retired_rows_equals_in_both_stores_and_in_sql(
    tmp_path,
    postgres_url: str,
    bm25: dict[str, float] | None,  # type: ignore[no-untyped-def]
) -> None:
    """The PostgreSQL store's mirror, its SQL statement and the embedded store agree per
    tenant, at the latest version (retired rows excluded) and at a pinned older one."""
    from rcpkit.engine.store.postgres import PostgresStore

    embedded = SQLiteStore(tmp_path / "index.sqlite3", bm25=bm25)
    shared = PostgresStore(postgres_url, bm25=bm25)
    assert embedded.bm25 == shared.bm25
    try:
        assert shared.index.lexical(analyze("query"), 5) == []  # the mirror loads an empty database
        pinned = _tenants_and_retirements([embedded, shared])[2]
        tree = parse_filter(
            {"field": "year", "op": "gte", "value": 2002}, {"year": "int"}, OPERATORS
        )
        for query in queries(13)[:25]:
            terms = analyze(query)
            for tenant in (None, "acme", "nobody"):
                for version in (None, pinned):
                    for where in (None, tree):
                        expected = embedded.index.lexical(terms, 10, where, version, tenant)
                        found = shared.index.lexical(terms, 10, where, version, tenant)
                        in_sql = shared.lexical_sql(terms, 10, where, version, tenant)
                        assert_same_ranking(expected, found, query)
                        assert_same_ranking(expected, in_sql, query)
        live = {key for key, _ in shared.index.lexical(analyze(" ".join(WORDS)), 10_000)}
        retired = shared.fetch(sorted(live))
        assert all(row.doc_id not in {f"d{i}" for i in range(20, 26)} for row in retired.values())
    finally:
        embedded.close()
        shared.close()


def test_a_server_ranks_another_servers_commits_at_its_next_read(postgres_url: str) -> None:
    """Two stores on one database (two servers): each one's BM25 follows the other's writes,
    deletes included, and a version pinned before them keeps its ranking."""
    from rcpkit.engine.store.postgres import PostgresStore

    one, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        documents = corpus(seed=9)
        pinned = one.commit(WriteBatch(documents=documents[:30])).version
        terms = analyze("postgres snapshot cursor")
        before = one.index.lexical(terms, 10)
        assert before
        assert_same_ranking(before, other.index.lexical(terms, 10), "before")
        other.commit(WriteBatch(documents=documents[30:]))
        gone = {one.fetch([key])[key].doc_id for key, _ in before[:3]}
        other.commit(WriteBatch(delete=sorted(gone)))
        after = one.index.lexical(terms, 10)
        assert_same_ranking(one.lexical_sql(terms, 10), after, "after")
        assert after != before
        assert not gone & {row.doc_id for row in one.fetch([k for k, _ in after]).values()}
        assert_same_ranking(before, one.index.lexical(terms, 10, version=pinned), "pinned")
    finally:
        one.close()
        other.close()


def test_servers_on_one_database_rank_with_the_parameters_it_was_created_with(
    postgres_url: str,
) -> None:
    """The first server records the parameters; a second one naming others is refused,
    one naming none ranks with the recorded ones."""
    from rcpkit.engine.store.postgres import PostgresStore

    first = PostgresStore(postgres_url, bm25={"k1": 0.9, "b": 0.4, "title_weight": 3.0})
    try:
        first.commit(WriteBatch(documents=corpus(seed=4)[:30]))
        terms = analyze("postgres snapshot cursor title")
        with pytest.raises(ValueError, match=r"title weight 3.*not title_weight = 2"):
            PostgresStore(postgres_url, bm25={"title_weight": 2.0})
        second = PostgresStore(postgres_url)
        try:
            assert second.bm25 == first.bm25
            assert_same_ranking(
                first.index.lexical(terms, 10), second.index.lexical(terms, 10), "second"
            )
            assert_same_ranking(
                first.index.lexical(terms, 10), second.lexical_sql(terms, 10), "sql"
            )
        finally:
            second.close()
    finally:
        first.close()
