"""Store contract tests: written against the Store interface, run for every backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.index.dense import DensePolicy
from rcpkit.engine.store.base import DocumentRow, NewChunk, Store, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore
from rcpkit.engine.store.sqlite.schema import SCHEMA_VERSION


def _postgres(folder: Path) -> Store:
    import pg_support

    from rcpkit.engine.store.postgres import PostgresStore

    return PostgresStore(pg_support.fresh_database())


BACKENDS: dict[str, Callable[[Path], Store]] = {
    "sqlite": lambda folder: SQLiteStore(folder / "index.sqlite3"),
    "postgres": _postgres,  # a fresh database per test on the session's server
}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = BACKENDS[request.param](tmp_path)
    yield opened
    opened.close()
    url = getattr(opened, "url", None)
    if url is not None:
        import pg_support

        pg_support.drop_database(url)


def document(doc_id: str, *texts: str) -> tuple[DocumentRow, list[NewChunk]]:
    row = DocumentRow(doc_id, doc_id.title(), None, doc_id, "text", {}, doc_id, " ".join(texts))
    chunks = [
        NewChunk(i, 0, len(text), text, None, None, "", text, np.ones(4, np.float32) / 2, {})
        for i, text in enumerate(texts)
    ]
    return row, chunks


def test_each_commit_is_a_new_version_and_old_versions_stay_readable(store: Store) -> None:
    first = store.commit(WriteBatch(documents=[document("a", "alpha words")]))
    second = store.commit(WriteBatch(documents=[document("a", "beta words")]))
    assert (first.version, second.version) == (1, 2)
    assert second.removed == [key for key, _ in first.added]
    assert [k for k, _ in store.index.lexical(["alpha"], 10)] == []
    assert [k for k, _ in store.index.lexical(["alpha"], 10, None, 1)] == [first.added[0][0]]
    assert store.count() == (1, 1)


def test_deleting_counts_live_documents_only(store: Store) -> None:
    store.commit(WriteBatch(documents=[document("a", "x"), document("b", "y")]))
    assert store.commit(WriteBatch(delete=["a", "a", "zzz"])).deleted_documents == 1
    assert store.commit(WriteBatch(delete=["a"])).deleted_documents == 0


def test_collection_drops_what_no_retained_version_can_see(store: Store) -> None:
    first = store.commit(WriteBatch(documents=[document("a", "gamma")]))
    for text in ("delta", "epsilon", "zeta"):
        store.commit(WriteBatch(documents=[document("a", text)]))
    dropped = store.collect(retain=2)
    assert first.added[0][0] in dropped
    assert store.floor == 3
    keys, _, _, removed, _ = store.vectors()
    assert len(keys) == 2  # versions 3 and 4 remain readable
    assert sorted(removed.tolist()) == [0, 4]


def test_an_index_of_another_layout_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    legacy = tmp_path / "index.sqlite3"
    with sqlite3.connect(legacy) as connection:
        connection.execute("CREATE TABLE documents (doc_id TEXT PRIMARY KEY)")
    with pytest.raises(ValueError, match="re-index"):
        SQLiteStore(legacy)


def unit(*values: float) -> np.ndarray:  # type: ignore[type-arg]
    vector = np.asarray(values, np.float32)
    return vector / np.linalg.norm(vector)


def with_vector(
    doc_id: str,
    text: str,
    vector: np.ndarray,
    meta: dict[str, object] | None = None,  # type: ignore[type-arg]
) -> tuple[DocumentRow, list[NewChunk]]:
    meta = meta or {}
    row = DocumentRow(doc_id, None, None, doc_id, "text", meta, doc_id, text)
    return row, [NewChunk(0, 0, len(text), text, None, None, "", text, vector, meta)]


YEAR = parse_filter({"field": "year", "op": "gte", "value": 2020}, {"year": "int"}, OPERATORS)


def test_dense_search_ranks_by_cosine_and_honours_filters_and_versions(store: Store) -> None:
    dense = store.open_dense(3, DensePolicy())
    first = store.commit(
        WriteBatch(
            documents=[
                with_vector("near", "x", unit(1, 0, 0), {"year": 2019}),
                with_vector("mid", "y", unit(1, 1, 0), {"year": 2021}),
                with_vector("far", "z", unit(0, 0, 1), {"year": 2022}),
            ]
        )
    )
    dense.apply(first, None)
    keys = {
        document: key
        for (key, _), document in zip(first.added, ("near", "mid", "far"), strict=True)
    }
    query = unit(1, 0.1, 0)
    ranked = dense.search(query, 3)
    assert [key for key, _ in ranked] == [keys["near"], keys["mid"], keys["far"]]
    assert ranked[0][1] == pytest.approx(float(unit(1, 0, 0) @ query), abs=1e-5)
    assert [key for key, _ in dense.search(query, 3, YEAR)] == [keys["mid"], keys["far"]]
    second = store.commit(WriteBatch(delete=["near"]))
    dense.apply(second, None)
    assert keys["near"] not in {key for key, _ in dense.search(query, 3)}
    assert [key for key, _ in dense.search(query, 1, None, 1)] == [keys["near"]]
    assert set(dense.vectors_of([keys["mid"]])) == {keys["mid"]}


def test_reads_are_scoped_to_the_tenant(store: Store) -> None:
    store.commit(WriteBatch(documents=[document("a", "shared words")], tenant="t1"))
    store.commit(WriteBatch(documents=[document("a", "shared words")], tenant="t2"))
    one = [key for key, _ in store.index.lexical(["shared"], 10, tenant="t1")]
    two = [key for key, _ in store.index.lexical(["shared"], 10, tenant="t2")]
    assert len(one) == len(two) == 1
    assert one != two
    assert store.index.lexical(["shared"], 10) == []
    assert store.count("t1") == (1, 1)
    assert store.content_hash("a", "t2") == "a"
    assert store.content_hash("a") is None


def test_lexical_and_learned_sparse_reads_take_the_filter_tree(store: Store) -> None:
    old = with_vector("old", "database words", unit(1, 0), {"year": 2019})
    new = with_vector("new", "database words", unit(1, 0), {"year": 2024})
    sparse = (np.array([3, 9], np.int64), np.array([0.5, 2.0], np.float32))
    old[1][0] = NewChunk(**{**_fields(old[1][0]), "sparse": sparse})
    new[1][0] = NewChunk(**{**_fields(new[1][0]), "sparse": sparse})
    result = store.commit(WriteBatch(documents=[old, new]))
    new_key = result.added[1][0]
    assert [key for key, _ in store.index.lexical(["database"], 10, YEAR)] == [new_key]
    assert len(store.index.lexical(["database"], 10)) == 2
    found = store.index.learned_sparse([9], [1.0], 10, YEAR)
    assert found == [(new_key, pytest.approx(2.0))]
    assert list(store.index.filtered_keys(YEAR)) == [new_key]
    assert store.filter_values([new_key], "year") == {new_key: 2024}


def _fields(chunk: NewChunk) -> dict[str, object]:
    return {name: getattr(chunk, name) for name in NewChunk.__slots__}  # type: ignore[attr-defined]


def test_a_commit_under_an_already_recorded_key_writes_nothing(store: Store) -> None:
    # §7.10: two requests with one key raced past `remembered`; the second commit keeps
    # the first's result and leaves the index as it was.
    first = store.commit(WriteBatch(documents=[document("a", "hello there")]), ("k1", "one"))
    again = store.commit(WriteBatch(documents=[document("b", "other text")]), ("k1", "two"))
    assert (again.version, again.added, again.remembered) == (first.version, [], "one")
    assert store.version == first.version
    assert store.count() == (1, 1)
    assert store.remembered("k1") == "one"


def test_idempotency_keys_past_their_retention_are_forgotten(store: Store) -> None:
    store.commit(WriteBatch(documents=[document("a", "x")]), ("k1", "one"))
    assert store.forget_idempotency(3600) == 0  # young: kept
    assert store.remembered("k1") == "one"
    assert store.forget_idempotency(0) == 1
    assert store.remembered("k1") is None
    repeat = store.commit(WriteBatch(documents=[document("a", "y")]), ("k1", "two"))
    assert (repeat.remembered, repeat.version) == (None, 2)  # a forgotten key writes again
    assert store.remembered("k1") == "two"


def test_settings_idempotency_and_fetch(store: Store) -> None:
    assert store.setting_default("cursor.secret", "aa") == "aa"
    assert store.setting_default("cursor.secret", "bb") == "aa"
    result = store.commit(WriteBatch(documents=[document("a", "hello there")]), ("k1", "{}"))
    assert store.remembered("k1") == "{}"
    assert store.remembered("k2") is None
    ((key, _),) = result.added
    row = store.fetch([key])[key]
    assert (row.doc_id, row.chunk_id, row.text, row.title) == ("a", "a#0", "hello there", "A")
    assert store.vocabulary() == [("hello", 1), ("there", 1)] or sorted(store.vocabulary()) == [
        ("hello", 1),
        ("there", 1),
    ]
    assert store.live_texts(5) == ["hello there"]


def test_an_index_of_layout_3_keeps_its_idempotency_keys_a_full_retention(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index.sqlite3"
    old = SQLiteStore(path)
    old.commit(WriteBatch(documents=[document("a", "x")]), ("k1", "one"))
    old.close()
    with sqlite3.connect(path) as connection:  # back to layout 3: no `created`
        connection.execute("DROP INDEX idempotency_created")
        connection.execute("ALTER TABLE idempotency DROP COLUMN created")
        connection.execute("PRAGMA user_version = 3")
    connection.close()
    upgraded = SQLiteStore(path)
    assert upgraded.forget_idempotency(3600) == 0
    assert upgraded.remembered("k1") == "one"
    assert upgraded.forget_idempotency(0) == 1
    upgraded.close()


def test_live_documents_and_a_document_with_its_text_are_read_back(store: Store) -> None:
    row = DocumentRow(
        "p.pdf", "P", "file:///c/p.pdf", "p.pdf", "text", {"textOf": "extracted"}, "h",
        "page one page two", [(1, 0, 8), (2, 9, 17)], "ingest",
    )  # fmt: skip
    store.commit(WriteBatch(documents=[(row, []), document("b", "bee")]))
    store.commit(WriteBatch(documents=[document("c", "sea")], tenant="t1"))
    assert store.live_documents() == [
        ("b", None, "index/add"),
        ("p.pdf", "file:///c/p.pdf", "ingest"),
    ]
    assert store.document("p.pdf") == row
    assert store.document("c") is None  # another tenant's
    assert store.document("c", "t1") is not None
    store.commit(WriteBatch(delete=["b"]))
    assert [doc_id for doc_id, _, _ in store.live_documents()] == ["p.pdf"]
    assert store.describe()["tenants"] == 2
    assert store.describe()["size_bytes"] > 0


def test_a_documents_chunks_are_its_live_ones_in_order_within_its_tenant(store: Store) -> None:
    store.commit(WriteBatch(documents=[document("a", "one", "two", "three"), document("b", "x")]))
    store.commit(WriteBatch(documents=[document("a", "uno", "dos")]))  # replaces a's chunks
    store.commit(WriteBatch(documents=[document("a", "tenant words")], tenant="t1"))
    chunks = store.document_chunks("a")
    assert [(chunk.index, chunk.text) for chunk in chunks] == [(0, "uno"), (1, "dos")]
    assert {chunk.doc_id for chunk in chunks} == {"a"}
    assert [chunk.text for chunk in store.document_chunks("a", "t1")] == ["tenant words"]
    assert store.document_chunks("missing") == []
    store.commit(WriteBatch(delete=["a"]))
    assert store.document_chunks("a") == []


def test_a_chunks_document_is_the_row_it_was_cut_from_even_once_replaced(
    store: Store,
) -> None:
    # §7.7.2: a pinned reader's document hit is the text its chunk's offsets index.
    first = store.commit(WriteBatch(documents=[document("a", "old words", "old tail")]))
    second = store.commit(WriteBatch(documents=[document("a", "new words")]))
    old, new = first.added[0][0], second.added[0][0]
    found = store.documents_of([old, new, first.added[1][0], 10**9])
    assert {key: row.text for key, row in found.items()} == {
        old: "old words old tail",
        first.added[1][0]: "old words old tail",
        new: "new words",
    }
    assert found[new] == store.document("a")
    assert store.documents_of([]) == {}


def test_an_unchanged_batch_commits_nothing_and_creates_no_version(store: Store) -> None:
    # Issue 14: a no-op re-index must not age pinned snapshots and cursors.
    first = store.commit(WriteBatch(documents=[document("a", "alpha")]))
    assert store.commit(WriteBatch()).version == first.version
    assert store.commit(WriteBatch(delete=["nobody"])).version == first.version
    empty = store.commit(WriteBatch(), ("k1", lambda version: f"at {version}"))
    assert (empty.version, store.remembered("k1")) == (first.version, f"at {first.version}")
    assert store.version == first.version
    assert store.commit(WriteBatch(delete=["a"])).version == first.version + 1


def test_writers_in_two_processes_share_one_version_sequence_seen_on_every_arm(
    tmp_path: Path,
) -> None:
    # Issue 14: two stores on one file stand for two processes (each has its own
    # connections and its own in-memory mirror); versions come from the file.
    path = tmp_path / "index.sqlite3"
    server, indexer = SQLiteStore(path, cache=False), SQLiteStore(path, cache=False)
    dense = server.open_dense(3, DensePolicy())
    old = server.commit(WriteBatch(documents=[with_vector("a", "lighthouse", unit(1, 0, 0))]))
    new = indexer.commit(WriteBatch(documents=[with_vector("b", "lighthouse", unit(0, 1, 0))]))
    retired = indexer.commit(WriteBatch(delete=["a"]))
    assert (old.version, new.version, retired.version) == (1, 2, 3)
    assert server.version == 3  # the next request sees the other writer's versions
    (a_key, _), (b_key, _) = old.added[0], new.added[0]
    assert [key for key, _ in server.index.lexical(["lighthouse"], 10)] == [b_key]
    assert [key for key, _ in dense.search(unit(0, 1, 0), 10)] == [b_key]
    # Pinned versions read exactly what existed at them, on both arms.
    assert [key for key, _ in server.index.lexical(["lighthouse"], 10, None, 1)] == [a_key]
    assert [key for key, _ in dense.search(unit(0, 1, 0), 10, None, 1)] == [a_key]
    assert {key for key, _ in dense.search(unit(0, 1, 0), 10, None, 2)} == {a_key, b_key}
    reused = server.commit(WriteBatch(documents=[with_vector("c", "x", unit(0, 0, 1))]))
    assert reused.version == 4  # the next version, not one already taken
    assert indexer.version == 4
    server.close()
    indexer.close()


def test_rows_round_trip_exactly_whatever_their_text_holds(store: Store) -> None:
    # Issue 20: the PostgreSQL store writes chunks as COPY BINARY and postings as COPY
    # text lines; a tenant, text or metadata holding COPY's own delimiters must not shift
    # a field, and vectors must read back bit for bit.
    tenant = "t\\1\t2\n3\r4 é"
    text = "tab\there\nnew line \\N back\\slash\r end"
    vector = np.array([0.1, -0.2, 0.3, np.float32(1) / 3], dtype=np.float32)
    row = DocumentRow("doc\t1", "Title\n", None, "src\\x", "text", {"k": "v\t\\"}, "h", text)
    meta = {"k": "v\t\\", "n": [1, 2.5], "u": "ü\n"}
    chunks = [
        NewChunk(0, 0, 10, text, 3, "ctx\\t\tx", "title", "zeta \\ body", vector, meta),
        NewChunk(1, 10, 20, "second", None, None, "", "zeta omega", vector, {}),
    ]
    result = store.commit(WriteBatch(documents=[(row, chunks)], tenant=tenant))
    first, second = (key for key, _ in result.added)
    fetched = store.fetch([first, second])
    assert (fetched[first].text, fetched[first].page, fetched[first].context) == (
        text,
        3,
        "ctx\\t\tx",
    )
    assert (fetched[second].page, fetched[second].context) == (None, None)
    assert fetched[first].doc_id == "doc\t1" and fetched[first].index == 0
    assert store.filter_values([first], "u") == {first: "ü\n"}
    assert sorted(k for k, _ in store.index.lexical(["zeta"], 10, tenant=tenant)) == [first, second]
    assert store.index.lexical(["omega"], 10, tenant=tenant)[0][0] == second
    assert (
        store.index.lexical(["zeta"], 10) == []
        and store.index.lexical(["zeta"], 10, tenant="t") == []
    )
    sql = getattr(store, "lexical_sql", None)  # PostgreSQL: BM25 over the postings table
    if sql is not None:
        assert sorted(k for k, _ in sql(["zeta"], 10, tenant=tenant)) == [first, second]
    assert store.count(tenant) == (1, 2)
    keys, matrix, *_ = store.vectors()
    assert keys.tolist() == [first, second]
    assert np.array_equal(matrix[0], vector) and np.array_equal(matrix[1], vector)


def test_a_reader_many_versions_behind_never_serves_rows_collected_since(
    tmp_path: Path,
) -> None:
    # A process that last followed at version 1 syncs after another process
    # deleted a document and garbage collection already dropped its rows: the
    # rows are gone from the file, so "retired since" cannot find them.
    path = tmp_path / "index.sqlite3"
    server, indexer = SQLiteStore(path, cache=False), SQLiteStore(path, cache=False)
    dense = server.open_dense(3, DensePolicy())
    kept = server.commit(WriteBatch(documents=[with_vector("a", "harbour", unit(1, 0, 0))]))
    gone = server.commit(WriteBatch(documents=[with_vector("b", "harbour", unit(0, 1, 0))]))
    assert len(server.index.lexical(["harbour"], 10)) == 2  # followed at version 2
    indexer.commit(WriteBatch(delete=["b"]))
    for text in ("one", "two", "three"):
        indexer.commit(WriteBatch(documents=[with_vector("c", text, unit(0, 0, 1))]))
    indexer.collect(retain=1)
    assert indexer.floor > 3  # the delete's version is no longer servable
    assert [key for key, _ in server.index.lexical(["harbour"], 10)] == [kept.added[0][0]]
    found = {key for key, _ in dense.search(unit(0, 1, 0), 10)}
    assert gone.added[0][0] not in found
    assert len(found) == 2  # "a" and the last "c"
    server.close()
    indexer.close()


def test_a_postgres_reader_many_versions_behind_never_serves_rows_collected_since() -> None:
    # The same follow on the PostgreSQL store's mirror (its lexical arm).
    import pg_support

    from rcpkit.engine.store.postgres import PostgresStore

    url = pg_support.fresh_database()
    server, indexer = PostgresStore(url), PostgresStore(url)
    try:
        kept = server.commit(WriteBatch(documents=[with_vector("a", "harbour", unit(1, 0, 0))]))
        server.commit(WriteBatch(documents=[with_vector("b", "harbour", unit(0, 1, 0))]))
        assert len(server.index.lexical(["harbour"], 10)) == 2
        indexer.commit(WriteBatch(delete=["b"]))
        for text in ("one", "two", "three"):
            indexer.commit(WriteBatch(documents=[with_vector("c", text, unit(0, 0, 1))]))
        indexer.collect(retain=1)
        assert indexer.floor > 3
        assert [key for key, _ in server.index.lexical(["harbour"], 10)] == [kept.added[0][0]]
    finally:
        server.close()
        indexer.close()
        pg_support.drop_database(url)


def test_each_tenant_numbers_its_own_versions_and_keeps_its_own_retention(store: Store) -> None:
    # §15.6, issue 35: another tenant's writes neither move a tenant's versions nor
    # expire them; a tenant's own writes still do, and its retired rows still go.
    mine = store.commit(WriteBatch(documents=[document("b", "beta first")], tenant="b"))
    assert (mine.version, mine.shown) == (1, 1)
    for number in range(10):
        theirs = store.commit(WriteBatch(documents=[document("a", f"alpha {number}")], tenant="a"))
        store.collect(retain=2)
    assert (theirs.version, theirs.shown) == (11, 10)
    assert store.tenancy.latest("b") == 1 and store.tenancy.latest("a") == 10
    assert store.tenancy.global_version("b", 1) == 1  # a's ten writes expired nothing of b's
    assert store.tenancy.global_version("a", 8) is None  # a keeps its own last two
    assert store.tenancy.floor("a") == 9
    assert [k for k, _ in store.index.lexical(["beta"], 10, None, 1, "b")] == [mine.added[0][0]]
    for text in ("beta second", "beta third", "beta fourth"):
        store.commit(WriteBatch(documents=[document("b", text)], tenant="b"))
    dropped = store.collect(retain=2)
    assert mine.added[0][0] in dropped
    assert store.tenancy.floor("b") == 3 and store.tenancy.latest("b") == 4
    assert store.tenancy.global_version("b", 1) is None
    assert store.tenancy.names() == ["a", "b"]


def test_a_reader_behind_never_serves_a_tenants_rows_collected_under_its_own_floor(
    tmp_path: Path,
) -> None:
    # Tenant floors differ (§15.6): rows of tenant b retired and collected while this
    # process did not follow are marked retired where b's versions cannot see them,
    # not at the highest floor (tenant a's), which b's older versions sit below.
    path = tmp_path / "index.sqlite3"
    server, indexer = SQLiteStore(path, cache=False), SQLiteStore(path, cache=False)
    server.open_dense(3, DensePolicy())
    gone = server.commit(
        WriteBatch(documents=[with_vector("old", "harbour", unit(0, 1, 0))], tenant="b")
    )
    assert len(server.index.lexical(["harbour"], 10, tenant="b")) == 1  # followed
    indexer.commit(WriteBatch(delete=["old"], tenant="b"))
    indexer.commit(WriteBatch(documents=[with_vector("new", "harbour", unit(1, 0, 0))], tenant="b"))
    for text in ("one", "two", "three", "four"):
        indexer.commit(WriteBatch(documents=[with_vector("c", text, unit(0, 0, 1))], tenant="a"))
    indexer.collect(retain=1)
    floor = indexer.tenancy.global_version("b", indexer.tenancy.floor("b"))
    assert floor is not None and floor < indexer.floor  # b's floor is below a's
    found = {key for key, _ in server.index.lexical(["harbour"], 10, None, floor, "b")}
    assert gone.added[0][0] not in found and len(found) == 1
    server.close()
    indexer.close()


def test_an_index_of_a_newer_layout_is_refused_untouched(tmp_path: Path) -> None:
    # A later rcpkit's rows may mean something else (layout 5's '' document texts
    # did for 4): reading them as this layout would show wrong data, silently.
    path = tmp_path / "index.sqlite3"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    connection.close()
    before = path.read_bytes()
    with pytest.raises(ValueError, match=f"layout {SCHEMA_VERSION + 1}"):
        SQLiteStore(path)
    assert path.read_bytes() == before
