"""The embedded store's pruning BM25 top-k: FTS5's bm25 exactly, per tenant and version.

With the default parameters the reference is FTS5's own ``bm25()``; with any other
(k1, b and the title weight are settings) it is the documented formula, row by row.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rcpkit.engine.filters import OPERATORS, Filter, matches, parse_filter
from rcpkit.engine.index import _postings
from rcpkit.engine.scoring.bm25 import BM25, DEFAULT_BM25, FTS5_BM25, tokens
from rcpkit.engine.store.base import DocumentRow, NewChunk, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore

# Zipf-distributed words: head terms in most chunks (idf clamped), a long tail.
WORDS = [f"w{i}" for i in range(400)]
WEIGHTS = [1 / (rank + 1) for rank in range(len(WORDS))]


def chunk_batch(rng: random.Random, ids: range, tenant: str | None = None) -> WriteBatch:
    documents = []
    for i in ids:
        title = " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(0, 3)))
        bodies = [
            " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(2, 30)))
            for _ in range(rng.randint(1, 3))
        ]
        meta = {"year": 2000 + i % 9}
        row = DocumentRow(f"d{i}", title, None, f"d{i}", "text", meta, f"h{i}", " ".join(bodies))
        vector = np.ones(4, np.float32) / 2
        chunks = [
            NewChunk(j, 0, len(body), body, None, None, title, body, vector, meta)
            for j, body in enumerate(bodies)
        ]
        documents.append((row, chunks))
    return WriteBatch(documents=documents, tenant=tenant)


def fts5_ranking(store: SQLiteStore, query: list[str], limit: int) -> list[tuple[int, float]]:
    """FTS5's own bm25 over the file (the reference on one tenant with nothing retired).

    Each distinct term's part is FTS5's bm25 of that term alone, summed with the
    query weight ``w`` of the formula (``query_weight``): FTS5 itself would sum a
    repeated phrase once per repeat, which is not rcpkit's weight.
    """
    scores: dict[int, float] = {}
    for term, count in Counter(query).items():
        rows = store._reader.execute(
            "SELECT rowid, bm25(chunks_fts, 2.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ?",
            (f'"{term}"',),
        ).fetchall()
        for key, rank in rows:
            scores[int(key)] = scores.get(int(key), 0.0) - query_weight(count) * float(rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


def query_weight(count: int) -> float:
    """A term's weight in a query holding it ``count`` times: ``1 + ln(count)`` (issue 50)."""
    return 1.0 + math.log(count)


def brute_force(
    store: SQLiteStore,
    query: list[str],
    limit: int,
    version: int,
    tenant: str = "",
    filter: Filter | None = None,
    bm25: BM25 | None = None,
) -> list[tuple[int, float]]:
    """The documented formula over the rows the tenant sees at the version, row by row
    (``bm25``: the store's parameters unless given)."""
    bm25 = store.bm25 if bm25 is None else bm25
    rows = store._reader.execute(
        "SELECT c.key, f.title, f.body, c.filter_meta FROM chunks c"
        " JOIN chunks_fts f ON f.rowid = c.key WHERE c.tenant = ? AND c.added <= ?"
        " AND (c.removed IS NULL OR c.removed > ?)",
        (tenant, version, version),
    ).fetchall()
    import json

    docs = {key: (Counter(tokens(title)), Counter(tokens(body)), json.loads(meta))
            for key, title, body, meta in rows}  # fmt: skip
    size = len(docs)
    average = sum(sum(t.values()) + sum(b.values()) for t, b, _ in docs.values()) / size
    scores: dict[int, float] = {}
    for term, count in Counter(query).items():
        weight = query_weight(count)  # w: sublinear in how often the query holds the term
        n = sum(1 for t, b, _ in docs.values() if term in t or term in b)
        if not n:
            continue
        idf = math.log((size - n + 0.5) / (n + 0.5))
        idf = 1e-6 if idf <= 0 else idf
        for key, (title, body, meta) in docs.items():
            f = bm25.title_weight * title[term] + bm25.body_weight * body[term]
            if not f or (filter is not None and not matches(filter, meta)):
                continue
            length = sum(title.values()) + sum(body.values())
            k1, b = bm25.k1, bm25.b
            tf = f * (k1 + 1) / (f + k1 * (1 - b + b * length / average))
            scores[key] = scores.get(key, 0.0) + weight * idf * tf
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]


def assert_same(expected: list[tuple[int, float]], found: list[tuple[int, float]]) -> None:
    assert len(found) == len(expected)
    for (key, score), (other, other_score) in zip(expected, found, strict=True):
        assert other_score == pytest.approx(score, rel=1e-9)
        if key != other:  # only an exact tie may order differently
            assert dict(expected).get(other) == pytest.approx(score, rel=1e-9)


def queries(rng: random.Random, count: int) -> list[list[str]]:
    # Head, middle and tail terms mixed: the pruning must skip head terms exactly.
    return [rng.choices(WORDS, k=rng.randint(1, 7)) for _ in range(count)]


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    """An index created with FTS5's own constants, so FTS5's bm25() is a reference."""
    fts5 = {"k1": FTS5_BM25.k1, "b": FTS5_BM25.b, "title_weight": FTS5_BM25.title_weight}
    opened = SQLiteStore(tmp_path / "index.sqlite3", bm25=fts5)
    rng = random.Random(3)
    for start in range(0, 300, 60):  # several commits: postings in several pieces
        opened.commit(chunk_batch(rng, range(start, start + 60)))
    return opened


@pytest.fixture(params=["pruned", "one pass"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of the top k: pruning (MaxScore) and every term scored in one pass.

    The index takes the second when a query's terms hold few postings, as all of
    this small store's do; each way is forced here so both are held to FTS5.
    """
    monkeypatch.setattr(_postings, "_DIRECT_POSTINGS", 0 if request.param == "pruned" else 10**9)
    return str(request.param)


@pytest.mark.usefixtures("way")
def test_the_pruned_top_k_equals_fts5_bm25_at_every_depth(store: SQLiteStore) -> None:
    for query in queries(random.Random(5), 80):
        for limit in (1, 3, 10, 50):
            assert_same(fts5_ranking(store, query, limit), store.index.lexical(query, limit))


@pytest.mark.usefixtures("way")
def test_a_repeated_query_term_weighs_sublinearly_and_the_top_k_stays_exact(
    store: SQLiteStore,
) -> None:
    # Issue 50: a long request repeats its subject's words, so a repeat counts, but
    # 1 + ln(count), not count: a one-sentence query's repeat is often a filler word
    # ("this command ... command"), and counting it in full lowered man-short's default.
    # The pruning's bounds scale with the weight.
    rng = random.Random(17)
    for _ in range(60):
        once = list(dict.fromkeys(rng.choices(WORDS, WEIGHTS, k=rng.randint(2, 8))))
        query = once + rng.choices(once, k=rng.randint(1, 6))
        for limit in (1, 10, 50):
            found = store.index.lexical(query, limit)
            assert_same(fts5_ranking(store, query, limit), found)
            assert_same(brute_force(store, query, limit, store.version), found)
    top = store.index.lexical(["w5", "w9"], 1)[0][0]
    twice = dict(store.index.lexical(["w5", "w9", "w9"], 300))
    alone = dict(store.index.lexical(["w5"], 300)), dict(store.index.lexical(["w9"], 300))
    expected = alone[0].get(top, 0.0) + (1 + math.log(2)) * alone[1].get(top, 0.0)
    assert twice[top] == pytest.approx(expected)


@pytest.mark.usefixtures("way")
def test_long_queries_of_head_terms_keep_the_exact_top_k(store: SQLiteStore) -> None:
    # Feedback expansions (prf.py): 8-20 terms drawn by frequency, so most are head
    # terms looked up weak-term by weak-term with the cut tightened after each.
    rng = random.Random(11)
    for _ in range(60):
        query = rng.choices(WORDS, WEIGHTS, k=rng.randint(8, 20)) + rng.choices(WORDS, k=2)
        for limit in (1, 10, 50):
            assert_same(fts5_ranking(store, query, limit), store.index.lexical(query, limit))


@pytest.mark.usefixtures("way")
def test_an_expanded_query_pruned_from_the_first_lists_floor_keeps_the_exact_top_k(
    store: SQLiteStore,
) -> None:
    # The feedback pass: a query's terms plus more score every row at least as the
    # query did, so its k-th score is a floor the top k may prune from (recall.py).
    rng = random.Random(13)
    floors = 0
    for _ in range(60):
        own = rng.choices(WORDS, k=rng.randint(1, 4))
        expanded = own + rng.choices(WORDS, WEIGHTS, k=rng.randint(4, 16))
        for limit in (1, 10, 50):
            first = store.index.lexical(own, limit)
            floor = first[-1][1] * (1 - 1e-9) if len(first) == limit else 0.0
            floors += floor > 0
            found = store.index.lexical(expanded, limit, floor=floor)
            assert_same(fts5_ranking(store, expanded, limit), found)
    assert floors > 100


@pytest.mark.usefixtures("way")
def test_statistics_are_those_of_the_tenant_at_the_version_read(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "index.sqlite3")
    rng = random.Random(4)
    store.commit(chunk_batch(rng, range(0, 80), tenant="t1"))
    pinned = store.commit(chunk_batch(rng, range(0, 40), tenant="t2")).version
    store.commit(chunk_batch(rng, range(40, 200), tenant="t2"))
    store.commit(chunk_batch(rng, range(0, 30), tenant="t2"))  # upserts: rows retired
    store.commit(WriteBatch(delete=[f"d{i}" for i in range(30, 60)], tenant="t2"))
    before = {tuple(q): store.index.lexical(q, 10, None, pinned, "t2") for q in queries(rng, 5)}
    for query in queries(random.Random(6), 40):
        for tenant in ("t1", "t2"):
            for version in (pinned, store.version):
                expected = brute_force(store, query, 10, version, tenant)
                assert_same(expected, store.index.lexical(query, 10, None, version, tenant))
    store.commit(chunk_batch(rng, range(300, 400), tenant="t2"))
    for query, ranking in before.items():  # §7.7.1: a pinned version keeps its scores
        assert store.index.lexical(list(query), 10, None, pinned, "t2") == ranking
    store.close()


@pytest.mark.usefixtures("way")
def test_a_filter_narrows_the_ranked_rows_not_the_statistics(store: SQLiteStore) -> None:
    tree = parse_filter({"field": "year", "op": "in", "value": [2001, 2004]},
                        {"year": "int"}, OPERATORS)  # fmt: skip
    for query in queries(random.Random(7), 40):
        expected = brute_force(store, query, 10, store.version, filter=tree)
        assert_same(expected, store.index.lexical(query, 10, tree))


OTHER_PARAMETERS = [
    FTS5_BM25,  # the index's file, not FTS5, ranks: the formula is the reference here too
    BM25(k1=0.9, b=0.4, title_weight=3.0),
    BM25(k1=2.0, b=0.9, title_weight=1.0),
    BM25(k1=1.5, b=0.0, title_weight=0.25, body_weight=1.5),
]


@pytest.mark.parametrize("bm25", OTHER_PARAMETERS, ids=lambda p: p.describe())
@pytest.mark.usefixtures("way")
def test_other_parameters_rank_by_the_formula_per_tenant_version_and_filter(
    tmp_path: Path, bm25: BM25
) -> None:
    """k1, b and the column weights are the index's: the pruned top-k is still exact."""
    settings = {"k1": bm25.k1, "b": bm25.b, "title_weight": bm25.title_weight,
                "body_weight": bm25.body_weight}  # fmt: skip
    store = SQLiteStore(tmp_path / "index.sqlite3", bm25=settings)
    assert store.bm25 == bm25
    rng = random.Random(8)
    store.commit(chunk_batch(rng, range(0, 120), tenant="t1"))
    pinned = store.commit(chunk_batch(rng, range(0, 60), tenant="t2")).version
    store.commit(chunk_batch(rng, range(60, 200), tenant="t2"))
    store.commit(WriteBatch(delete=[f"d{i}" for i in range(30, 60)], tenant="t2"))
    tree = parse_filter({"field": "year", "op": "gte", "value": 2003}, {"year": "int"}, OPERATORS)
    for query in queries(random.Random(9), 30):
        for tenant in ("t1", "t2"):
            for version in (pinned, store.version):
                for where in (None, tree):
                    expected = brute_force(store, query, 10, version, tenant, where, bm25)
                    assert_same(expected, store.index.lexical(query, 10, where, version, tenant))
    store.close()


def test_an_index_keeps_the_parameters_it_was_created_with(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    created = SQLiteStore(path, bm25={"k1": 1.7, "b": 0.4, "title_weight": None})
    created.commit(chunk_batch(random.Random(2), range(0, 50)))
    ranking = created.index.lexical(["w3", "w40"], 10)
    created.close()
    reopened = SQLiteStore(path)  # nothing configured: the index's own
    assert reopened.bm25 == BM25(k1=1.7, b=0.4, title_weight=DEFAULT_BM25.title_weight)
    assert reopened.index.lexical(["w3", "w40"], 10) == ranking
    reopened.close()
    same = SQLiteStore(path, bm25={"k1": 1.7})  # naming the recorded value is fine
    same.close()
    with pytest.raises(ValueError, match=r"k1 1\.7, b 0\.4.*not b = 0\.75"):
        SQLiteStore(path, bm25={"b": 0.75})


def test_an_index_from_before_the_settings_keeps_ranking_with_fts5s_constants(
    tmp_path: Path,
) -> None:
    """An index with versions but no recorded parameters ranked with FTS5's k1, b and
    weights; it keeps them (and records them), the new defaults are for new indexes."""
    path = tmp_path / "index.sqlite3"
    old = SQLiteStore(path)
    old.commit(chunk_batch(random.Random(12), range(0, 80)))
    with old._transaction() as connection:  # as an index written by an earlier rcpkit
        connection.execute("DELETE FROM settings WHERE name = 'bm25'")
    old.close()
    reopened = SQLiteStore(path)
    assert reopened.bm25 == FTS5_BM25 != DEFAULT_BM25
    query = ["w2", "w17", "w90"]
    assert_same(fts5_ranking(reopened, query, 10), reopened.index.lexical(query, 10))
    reopened.close()
    assert SQLiteStore(path).bm25 == FTS5_BM25  # recorded now
    fresh = SQLiteStore(tmp_path / "new.sqlite3")
    assert fresh.bm25 == DEFAULT_BM25


def test_tokens_are_the_tokens_fts5_makes_of_the_same_text() -> None:
    # The index counts terms with `tokens` and FTS5 matches with its own tokenizer: they
    # must split analysed text alike (case-folded words, digits, "_" inside a snake_case
    # term), on the fast path (plain lower-case ASCII words) and off it.
    import sqlite3

    rng = random.Random(7)
    alphabet = "abcxyz019 _-.\n\tABCé日ß"
    texts = ["boundary layer 12 flow", "parse_filt token", "", "  ", "Ünïcode wörds"]
    texts += ["".join(rng.choices(alphabet, k=rng.randrange(0, 14))) for _ in range(300)]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61 remove_diacritics 0')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(texts, 1))
    made: dict[int, list[str]] = {}
    for rowid, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        made.setdefault(rowid, []).append(term)
    for rowid, text in enumerate(texts, 1):
        assert tokens(text) == made.get(rowid, []), repr(text)
