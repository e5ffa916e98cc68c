"""Only the PostgreSQL store: migrations, pgvector HNSW, several writers, an engine on it."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from engine_support import Calls, make_engine, serving
from pg_support import own_server

from rcpkit.cli import main
from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import OPERATORS, parse_filter
from rcpkit.engine.store import migrations
from rcpkit.engine.store.base import DocumentRow, NewChunk, WriteBatch
from rcpkit.engine.store.deadline import deadline_scope
from rcpkit.engine.store.postgres import PostgresStore
from rcpkit.engine.store.postgres.dense import HnswSettings, PostgresDenseSearch
from rcpkit.engine.store.sqlite import SQLiteStore
from rcpkit.engine.text.analysis import analyze_query
from rcpkit.handlers.inspect import index_figures
from rcpkit.protocol.errors import ErrorCode, RCPError


@pytest.fixture
def engine(postgres_url: str, tmp_path: Path) -> Iterator[Engine]:
    """An engine on the test's PostgreSQL database, closed after the test."""
    opened = make_engine(tmp_path / "local", store=postgres_url)
    yield opened
    opened.close()


def test_db_migrate_is_idempotent(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "migrate", "--store", postgres_url]) == 0
    assert "applied 0001_initial" in capsys.readouterr().out
    assert main(["db", "migrate", "--store", postgres_url]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["db", "status", "--store", postgres_url]) == 0
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute("SELECT version FROM schema_migrations").fetchall()
    assert rows == [(step.version,) for step in migrations.MIGRATIONS]


def test_concurrent_migrations_apply_each_step_once(postgres_url: str) -> None:
    results: list[int] = []

    def run() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as connection:
            results.append(migrations.migrate(connection)[0])

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results == [migrations.MIGRATIONS[-1].version] * 3


def test_db_status_reports_an_unmigrated_database(postgres_url: str) -> None:
    assert main(["db", "status", "--store", postgres_url]) == 1
    assert main(["db", "migrate"]) == 2  # no store given: a usage error, not a traceback


def vectors(count: int, dimension: int, seed: int) -> np.ndarray:  # type: ignore[type-arg]
    matrix = np.random.default_rng(seed).normal(size=(count, dimension)).astype(np.float32)
    normalised: np.ndarray = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)  # type: ignore[type-arg]
    return normalised


def chunk_of(doc_id: str, vector: np.ndarray, bucket: int) -> tuple[DocumentRow, list[NewChunk]]:  # type: ignore[type-arg]
    meta = {"bucket": bucket}
    row = DocumentRow(doc_id, None, None, doc_id, "text", meta, doc_id, doc_id)
    return row, [NewChunk(0, 0, 1, doc_id, None, None, "", doc_id, vector, meta)]


def test_hnsw_and_exact_paths_agree_with_and_without_filters(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    matrix = vectors(600, 16, seed=1)
    store.open_dense(16)
    result = store.commit(
        WriteBatch(documents=[chunk_of(f"d{i}", v, i % 10) for i, v in enumerate(matrix)])
    )
    keys = np.array([key for key, _ in result.added])
    approximate = PostgresDenseSearch(store, HnswSettings(exact_max=50))  # HNSW above 50
    exact = PostgresDenseSearch(store, HnswSettings(exact_max=10_000))
    selective = parse_filter(
        {"field": "bucket", "op": "eq", "value": 3}, {"bucket": "int"}, OPERATORS
    )
    broad = parse_filter({"field": "bucket", "op": "lt", "value": 8}, {"bucket": "int"}, OPERATORS)
    recalls = []
    for query in vectors(20, 16, seed=2):
        truth = keys[np.argsort(-(matrix @ query), kind="stable")[:10]].tolist()
        assert [key for key, _ in exact.search(query, 10)] == truth
        recalls.append(len({key for key, _ in approximate.search(query, 10)} & set(truth)) / 10)
        # A filter keeping 60 rows: still HNSW (60 > 50), iterative scan fills k.
        found = approximate.search(query, 10, selective)
        assert len(found) == 10
        assert {key for key, _ in found} <= set(keys[3::10].tolist())
        assert len(approximate.search(query, 10, broad)) == 10
    assert np.mean(recalls) >= 0.9
    store.close()


def test_writers_in_several_processes_serialise_on_the_versions_row(postgres_url: str) -> None:
    # Two store objects stand for two processes: separate connections, no shared lock.
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    versions: list[int] = []
    vector = vectors(1, 4, seed=3)[0]

    def write(store: PostgresStore, rounds: int) -> None:
        for round_ in range(rounds):
            batch = WriteBatch(documents=[chunk_of(f"id{i}", vector, round_) for i in range(3)])
            versions.append(store.commit(batch).version)

    threads = [threading.Thread(target=write, args=(store, 10)) for store in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(versions) == list(range(1, 21))
    assert first.version == second.version == 20
    assert first.count() == (3, 3)
    first.close()
    second.close()


async def test_an_engine_on_postgres_serves_the_whole_retrieve_pipeline(engine: Engine) -> None:
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result(
            "index/add",
            {
                "documents": [
                    {
                        "id": "a",
                        "text": "Postgres stores vectors with pgvector",
                        "meta": {"year": 2024},
                    },
                    {
                        "id": "b",
                        "text": "SQLite keeps everything in one file",
                        "meta": {"year": 2019},
                    },
                ]
            },
        )
        for mode in ("dense", "sparse", "hybrid"):
            found = await call.result(
                "retrieve",
                {"query": "pgvector vectors", "k": 2, "mode": mode,
                 "filter": {"field": "year", "op": "gte", "value": 2020}},
            )  # fmt: skip
            assert [hit["id"] for hit in found["hits"]] == ["a#0"], mode
        mmr = await call.result("retrieve", {"query": "file", "k": 2, "mmr": {"lambda": 0.5}})
        assert mmr["hits"]
        stats = await call.result("x-rcpkit/stats", {})
    assert stats["documents"] == 2
    assert index_figures(engine.store)["ingested"] == 0  # counted in SQL: none by rcpkit index


async def test_a_streaming_replica_serves_reads_of_the_primarys_writes(tmp_path: Path) -> None:
    # Its own small cluster: a base backup of the session's would copy every test database.
    primary = own_server()
    replica = None
    try:
        url = primary.url()
        writer = make_engine(tmp_path / "primary", store=url)
        async with serving(writer) as peer:
            await Calls(peer).result(
                "index/add", {"documents": [{"id": "r1", "text": "replicated lighthouse"}]}
            )
        version = writer.store.version
        writer.close()
        replica = primary.replica()
        standby_url = replica.url()
        store = PostgresStore(standby_url)
        assert store.read_only
        deadline = time.monotonic() + 30
        while store.version < version:  # bounded wait for the standby to replay
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        store.close()
        # Not told --read-only: a standby still serves as one (index/add gated, -32003).
        reader = make_engine(tmp_path / "reader", store=standby_url)
        async with serving(reader) as peer:
            found = await Calls(peer).result("retrieve", {"query": "lighthouse", "k": 2})
            refused = await Calls(peer).error("index/add", {"documents": [{"text": "x"}]})
            # Agentic state cannot go into a standby: kept beside its index instead.
            session = {"query": "lighthouse", "k": 1, "sessionId": "s"}
            assert (await Calls(peer).result("retrieve", session))["hits"]
            assert (await Calls(peer).result("retrieve", session))["hits"] == []
            report = {"signals": [{"hitId": "r1#0", "used": True}]}
            assert await Calls(peer).result("feedback", report) == {"accepted": 1}
        assert refused["code"] == -32003
        assert [hit["id"] for hit in found["hits"]] == ["r1#0"]
        assert found["indexVersion"] == str(version)
        reader.close()
    finally:
        if replica is not None:
            replica.stop()
        primary.stop()


async def test_a_standby_computes_communities_in_memory_and_reads_the_primarys(
    tmp_path: Path,
) -> None:
    # Issue 20: communities are computed lazily and stored by the server that needs them;
    # a standby cannot store. It computes them in memory (no -32603), stores nothing, and
    # once the primary has stored them for the version it serves, reads those.
    texts = [
        ("p1", "Roald Amundsen led the expedition aboard the Fram. Olav Bjaaland skied too."),
        ("p2", "Olav Bjaaland grew up in Morgedal. Roald Amundsen praised Olav Bjaaland."),
        ("l1", "Marie Curie isolated Radium in Paris. Pierre Curie measured the Radium."),
        ("l2", "Pierre Curie and Marie Curie shared the Nobel Prize with Henri Becquerel."),
    ]
    primary = own_server()
    replica = None
    try:
        writer = make_engine(tmp_path / "primary", store=primary.url(), graph="regex")
        documents = [{"id": i, "text": t} for i, t in texts]
        async with serving(writer) as peer:
            await Calls(peer).result("index/add", {"documents": documents, "chunk": False})
        replica = primary.replica()
        store = PostgresStore(replica.url())
        deadline = time.monotonic() + 30
        while store.version < writer.store.version:  # bounded wait for the replay
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        store.close()
        reader = make_engine(tmp_path / "reader", store=replica.url(), graph="regex")
        listing = {"op": "communities", "k": 50}
        async with serving(reader) as peer:
            computed = await Calls(peer).result("graph", listing)
            found = await Calls(peer).result("graph", {"op": "global", "query": "Curie Radium"})
        assert computed["communities"] and found["communities"]
        assert writer.graphs is not None
        graph = writer.graphs.of(None)
        assert graph.communities_stale  # the standby stored nothing
        async with serving(writer) as peer:
            stored = await Calls(peer).result("graph", listing)
        assert not graph.communities_stale
        assert stored["communities"] == computed["communities"]
        deadline = time.monotonic() + 30
        while reader.graphs.of(None).store.communities_version != graph.store.version:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        async with serving(reader) as peer:
            assert (await Calls(peer).result("graph", listing)) == stored
        reader.close()
        writer.close()
    finally:
        if replica is not None:
            replica.stop()
        primary.stop()


def test_bm25_at_a_pinned_version_keeps_its_scores_after_more_writes(postgres_url: str) -> None:
    # §7.7.1: statistics are those of the version read, not of the latest.
    store = PostgresStore(postgres_url)
    vector = vectors(1, 4, seed=4)[0]

    def text_chunk(doc_id: str, text: str) -> tuple[DocumentRow, list[NewChunk]]:
        row = DocumentRow(doc_id, None, None, doc_id, "text", {}, doc_id, text)
        return row, [NewChunk(0, 0, len(text), text, None, None, "", text, vector, {})]

    first = store.commit(
        WriteBatch(documents=[text_chunk("a", "alpha beta"), text_chunk("b", "beta gamma")])
    )
    before = store.index.lexical(["beta", "alpha"], 10, None, first.version)
    store.commit(WriteBatch(documents=[text_chunk(f"n{i}", "beta beta delta") for i in range(5)]))
    store.commit(WriteBatch(documents=[text_chunk("a", "alpha only")]))
    assert store.index.lexical(["beta", "alpha"], 10, None, first.version) == before
    latest = dict(store.index.lexical(["beta", "alpha"], 10))
    assert latest != dict(before)
    store.close()


def test_a_repeated_query_term_weighs_alike_in_sql_in_the_index_and_in_sqlite(
    postgres_url: str, tmp_path: Path
) -> None:
    # Issue 50: a term's part is multiplied by its query weight (1 + ln of its count), on every
    # path: PostgreSQL's SQL (a version the index does not hold), its query index, and
    # the embedded store's.
    texts = ["alpha beta", "beta gamma", "gamma gamma delta", "alpha delta delta", "epsilon"]
    postgres, sqlite = stores = _both_holding(texts * 3, postgres_url, tmp_path)
    for query in (["alpha", "delta", "delta"], ["gamma", "beta", "gamma", "gamma"]):
        in_sql = postgres.lexical_sql(query, 10)
        for other in (postgres.index.lexical(query, 10), sqlite.index.lexical(query, 10)):
            assert [key for key, _ in other] == [key for key, _ in in_sql]
            assert [score for _, score in other] == pytest.approx([s for _, s in in_sql])
    once = [dict(postgres.lexical_sql([term], 20)) for term in ("alpha", "delta")]
    twice = dict(postgres.lexical_sql(["alpha", "delta", "delta"], 20))
    for key, score in twice.items():
        # w = 1 + ln(count): a repeat counts, sublinearly
        expected = once[0].get(key, 0.0) + (1 + math.log(2)) * once[1].get(key, 0.0)
        assert score == pytest.approx(expected)
    for store in stores:
        store.close()


def test_an_identifiers_parts_weigh_half_alike_in_sql_in_the_index_and_in_sqlite(
    postgres_url: str, tmp_path: Path
) -> None:
    # Issue 50: a query's "PostgreSQL" is postgresql, and its parts postgr and sql at
    # 1/2 each (one word's evidence); every path weighs them so.
    texts = ["postgresql cluster", "postgr shell sql", "postgresql sql", "backup", "panel"]
    postgres, sqlite = stores = _both_holding(texts * 3, postgres_url, tmp_path)
    query = analyze_query("PostgreSQL")
    assert query == ["postgresql", "postgr", "sql"]
    in_sql = dict(postgres.lexical_sql(query, 20))
    for other in (postgres.index.lexical(query, 20), sqlite.index.lexical(query, 20)):
        assert dict(other) == pytest.approx(in_sql)
    alone = [dict(postgres.lexical_sql([str(term)], 20)) for term in query]  # each as a word
    for key, score in in_sql.items():
        parts = alone[1].get(key, 0.0) + alone[2].get(key, 0.0)
        assert score == pytest.approx(alone[0].get(key, 0.0) + parts / 2)
    for store in stores:
        store.close()


def _both_holding(
    texts: list[str], postgres_url: str, tmp_path: Path
) -> tuple[PostgresStore, SQLiteStore]:
    """A PostgreSQL and an embedded store, each holding one one-chunk document a text."""
    postgres, sqlite = PostgresStore(postgres_url), SQLiteStore(tmp_path / "index.sqlite3")
    vector = vectors(1, 4, seed=7)[0]
    batch = [
        (
            DocumentRow(f"d{i}", None, None, f"d{i}", "text", {}, f"d{i}", text),
            [NewChunk(0, 0, len(text), text, None, None, "", text, vector, {})],
        )
        for i, text in enumerate(texts)
    ]
    for store in (postgres, sqlite):
        store.commit(WriteBatch(documents=batch))
    return postgres, sqlite


def test_a_commit_after_its_connection_was_lost_succeeds(postgres_url: str) -> None:
    # Issue 20: a Postgres restart or a killed backend costs at most the requests in
    # flight; the pool checks each connection it hands out, so the next commit succeeds.
    store = PostgresStore(postgres_url)
    vector = vectors(1, 4, seed=5)[0]
    store.commit(WriteBatch(documents=[chunk_of("a", vector, 1)]))
    _terminate_all(postgres_url)
    assert store.commit(WriteBatch(documents=[chunk_of("b", vector, 1)])).version == 2
    assert store.count() == (2, 2)
    store.close()


def test_a_repeated_idempotency_key_in_another_process_does_not_reapply_the_write(
    postgres_url: str,
) -> None:
    # §7.10: a client retrying on another server after a timeout; both servers checked
    # `remembered` before either committed. The second commit must not apply its batch.
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    vector = vectors(1, 4, seed=6)[0]
    assert second.remembered("t\x1fkey") is None
    done = first.commit(WriteBatch(documents=[chunk_of("a", vector, 1)]), ("t\x1fkey", "first"))
    repeat = second.commit(
        WriteBatch(documents=[chunk_of("a", vector, 1)]), ("t\x1fkey", lambda v: f"v{v}")
    )
    assert repeat.remembered == "first"
    assert (repeat.version, repeat.added, repeat.removed) == (done.version, [], [])
    assert second.version == done.version == 1
    assert second.remembered("t\x1fkey") == "first"
    first.close()
    second.close()


def _terminate_all(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )


async def test_requests_after_the_store_connections_were_lost_all_succeed(
    postgres_url: str, engine: Engine
) -> None:
    # Issue 20: killed backends (a restart, a failover) are found by the pool's check
    # before use, so no request after the loss fails (before the pool: one per worker).
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "a", "text": "alpha"}]})
        for method, params in (
            ("retrieve", {"query": "alpha", "mode": "sparse"}),
            ("retrieve", {"query": "alpha", "mode": "dense"}),
            ("index/add", {"documents": [{"id": "b", "text": "beta"}]}),
            ("feedback", {"signals": [{"hitId": "a#0", "used": True}]}),
        ):
            _terminate_all(postgres_url)
            for _ in range(4):
                await call.result(method, params)


async def test_text_postgres_cannot_store_is_invalid_params_and_writes_nothing(
    engine: Engine,
) -> None:
    # PostgreSQL text and jsonb hold no U+0000: refuse the write (§12 -32602), no traceback.
    async with serving(engine) as peer:
        call = Calls(peer)
        for document in (
            {"id": "a\u0000", "text": "x"},
            {"id": "a", "text": "x\u0000y"},
            {"id": "a", "text": "xy", "meta": {"k": "a\u0000"}},
            {"id": "a", "text": "xy", "title": "t\u0000"},
        ):
            error = await call.error("index/add", {"documents": [document]})
            assert (error["code"], error["data"]["field"]) == (-32602, "documents"), document
        error = await call.error("index/delete", {"ids": ["a\u0000"]})
        assert (error["code"], error["data"]["field"]) == (-32602, "ids")
    assert engine.store.version == 0


def test_a_server_with_another_model_records_nothing_in_the_shared_store(
    postgres_url: str, tmp_path: Path
) -> None:
    # Two servers starting together on a new database with different models: the one
    # that loses the race on embed.identity must not record its dimension either, or the
    # winner reopens the store with a vector column of the wrong dimension.
    store = PostgresStore(postgres_url)
    store.set_setting("embed.identity", "some-other-model")
    store.close()
    with pytest.raises(ValueError, match="was built with some-other-model"):
        make_engine(tmp_path / "local", store=postgres_url)
    store = PostgresStore(postgres_url)
    assert store.setting("embed.dimension") is None
    store.close()


async def test_an_idempotency_key_postgres_cannot_store_is_invalid_params(engine: Engine) -> None:
    # The key is the client's string: one holding U+0000 is refused, not an internal error.
    async with serving(engine) as peer:
        error = await Calls(peer).error(
            "index/add",
            {"documents": [{"id": "a", "text": "x"}], "_meta": {"idempotencyKey": "k\u0000"}},
        )
    assert (error["code"], error["data"]["field"]) == (-32602, "_meta.idempotencyKey")
    assert engine.store.version == 0


def _lock_waiters(url: str) -> int:
    """Backends of ``url``'s database waiting on a lock (a statement still running)."""
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"
            " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
            (name,),
        ).fetchone()
    return int(count)


async def test_a_retrieve_past_its_deadline_stops_its_sql_and_is_timeout(
    postgres_url: str, engine: Engine
) -> None:
    # §13.1: past the deadline the answer is -32014 and the work stops, SQL included:
    # the read blocked on a lock is cancelled by its statement_timeout, not left waiting.
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "a", "text": "alpha"}]})
        for mode in ("sparse", "dense"):
            blocker = psycopg.connect(postgres_url)  # holds the lock until closed
            blocker.execute("LOCK TABLE postings, chunks IN ACCESS EXCLUSIVE MODE")
            try:
                params = {"query": "alpha", "mode": mode, "_meta": {"deadlineMs": 300}}
                error = await call.error("retrieve", params)
                assert error["code"] == ErrorCode.TIMEOUT, mode
                # The timeout fires with the deadline; PostgreSQL on a loaded machine may
                # take a while to end the backend's wait: the bound only catches a hang.
                for _ in range(1500):  # at least 30 s
                    if _lock_waiters(postgres_url) == 0:
                        break
                    await asyncio.sleep(0.02)
                assert _lock_waiters(postgres_url) == 0, mode
            finally:
                blocker.close()
            hits = (await call.result("retrieve", {"query": "alpha", "mode": mode}))["hits"]
            assert [hit["id"] for hit in hits] == ["a#0"], mode


def test_a_store_read_past_the_deadline_is_timeout_and_one_within_it_runs(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    with deadline_scope(time.monotonic() - 1), pytest.raises(RCPError) as raised:
        store.index.lexical(["alpha"], 5)
    assert raised.value.code == ErrorCode.TIMEOUT
    with deadline_scope(time.monotonic() + 30):
        assert store.index.lexical(["alpha"], 5) == []
        assert store.version == 0
    store.close()


def test_keys_of_a_schema_1_database_keep_a_full_retention_after_the_upgrade(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch, psycopg.connect(postgres_url, autocommit=True) as old:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
        migrations.migrate(old)
        old.execute("INSERT INTO idempotency (key, result) VALUES ('k1', 'one')")
    store = PostgresStore(postgres_url)  # applies 0002: the key is dated now
    assert store.forget_idempotency(3600) == 0
    assert store.remembered("k1") == "one"
    assert store.forget_idempotency(0) == 1
    store.close()


def _vector_index(url: str) -> tuple[bool, bool] | None:
    """(valid, HNSW) of the chunks_embedding index, None when absent."""
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT i.indisvalid, a.amname = 'hnsw' FROM pg_index AS i"
            " JOIN pg_class AS c ON c.oid = i.indexrelid JOIN pg_am AS a ON a.oid = c.relam"
            " WHERE i.indexrelid = to_regclass('chunks_embedding')"
        ).fetchone()
    return None if row is None else (bool(row[0]), bool(row[1]))


async def test_a_bulk_load_defers_the_vector_index_and_db_reindex_builds_it(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "migrate", "--store", postgres_url]) == 0
    assert main(["db", "reindex", "--store", postgres_url]) == 2  # no vectors yet
    assert "no vectors yet" in capsys.readouterr().err
    assert main(["db", "defer-index", "--store", postgres_url]) == 0
    assert "until `rcpkit db reindex`" in capsys.readouterr().out
    engine = make_engine(tmp_path / "local", store=postgres_url)  # opening builds no index
    documents = [
        {"id": f"d{i}", "text": f"document number {i} about topic {i % 7}"} for i in range(40)
    ]
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": documents})
        assert _vector_index(postgres_url) is None
        query = {"query": "topic 3", "mode": "dense", "k": 5}
        deferred = await call.result("retrieve", query)  # exact scan meanwhile
        assert main(["db", "reindex", "--store", postgres_url]) == 0
        assert "built the HNSW index" in capsys.readouterr().out
        assert _vector_index(postgres_url) == (True, True)
        assert main(["db", "reindex", "--store", postgres_url]) == 0
        assert "rebuilt the HNSW index" in capsys.readouterr().out
        indexed = await call.result("retrieve", query)
    engine.close()
    assert [hit["id"] for hit in indexed["hits"]] == [hit["id"] for hit in deferred["hits"]]
    reopened = make_engine(tmp_path / "local", store=postgres_url)
    reopened.close()
    assert _vector_index(postgres_url) == (True, True)


async def test_a_pinned_retrieve_is_not_torn_by_another_process_collecting(
    postgres_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 20: the version check and the reads are one snapshot. Another process's
    # collect commits after the check, before the reads: the pinned read still serves v1.
    other = PostgresStore(postgres_url)
    async with serving(engine) as peer:
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "a", "text": "alpha lantern"}]})
        await call.result("index/add", {"documents": [{"id": "a", "text": "gamma"}]})
        pinned = {"query": "alpha lantern", "mode": "sparse", "indexVersion": "1"}
        before = await call.result("retrieve", pinned)
        lexical = engine.store.index.lexical

        def collect_first(*args: object, **kwargs: object) -> object:
            assert other.collect(1)  # deletes version 1's chunk of "a", floor -> 2
            monkeypatch.setattr(engine.store.index, "lexical", lexical)
            return lexical(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(engine.store.index, "lexical", collect_first)
        during = await call.result("retrieve", pinned)
        after = await call.error("retrieve", pinned)
    assert [hit["id"] for hit in before["hits"]] == ["a#0"]
    assert during["hits"] == before["hits"]
    assert during["indexVersion"] == "1"
    assert after["code"] == -32010  # version 1 is gone now: refused, never another one
    other.close()


async def test_a_write_past_its_deadline_is_timeout_and_writes_nothing(
    postgres_url: str, engine: Engine
) -> None:
    # Issue 20, §13.1: a write waiting on another process's commit (the versions row)
    # is cut off at the request's deadline and rolls back; it does not land later.
    async with serving(engine) as peer:
        call = Calls(peer)
        blocker = psycopg.connect(postgres_url)  # another process mid-commit
        blocker.execute("SELECT * FROM versions FOR UPDATE")
        try:
            late = {"documents": [{"id": "late", "text": "x"}], "_meta": {"deadlineMs": 500}}
            error = await call.error("index/add", late)
        finally:
            blocker.close()
        assert error["code"] == ErrorCode.TIMEOUT
        # Serialised behind the first write in this process: it has finished by now.
        await call.result("index/add", {"documents": [{"id": "next", "text": "y"}]})
        assert engine.store.count() == (1, 1)
        assert engine.store.content_hash("late") is None


def _index_options(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT reloptions FROM pg_class WHERE oid = to_regclass('chunks_embedding')"
        ).fetchone()
    return sorted(row[0]) if row and row[0] else []


def test_hnsw_settings_shape_the_index_and_reindex_applies_changed_ones(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = PostgresStore(postgres_url, hnsw=HnswSettings(m=8, ef_construction=32))
    store.open_dense(4)
    store.commit(WriteBatch(documents=[chunk_of("a", vectors(1, 4, seed=7)[0], 1)]))
    store.close()
    assert _index_options(postgres_url) == ["ef_construction=32", "m=8"]
    settings = tmp_path / "rcpkit.toml"
    settings.write_text("[engine]\nhnsw_m = 12\nhnsw_ef_construction = 40\n")
    assert main(["db", "reindex", "--store", postgres_url, "--config", str(settings)]) == 0
    assert "built" in capsys.readouterr().out
    assert _index_options(postgres_url) == ["ef_construction=40", "m=12"]
    with pytest.raises(ValueError, match="hnsw_ef_construction"):
        HnswSettings(m=16, ef_construction=20)


def test_stored_vectors_read_back_exactly_in_every_read_of_them(postgres_url: str) -> None:
    """vectors_of, vectors and sample decode pgvector's binary form bit for bit."""
    store = PostgresStore(postgres_url)
    try:
        matrix = vectors(30, 16, seed=4)
        dense = store.open_dense(16)
        result = store.commit(
            WriteBatch(documents=[chunk_of(f"d{i}", v, i) for i, v in enumerate(matrix)])
        )
        keys = [key for key, _ in result.added]
        found = dense.vectors_of(keys)
        assert all(np.array_equal(found[key], matrix[i]) for i, key in enumerate(keys))
        _, stored, *_ = store.vectors()
        assert stored.dtype == np.float32 and np.array_equal(stored, matrix)
        sample = dense.sample(30)
        assert {row.tobytes() for row in sample} == {row.tobytes() for row in matrix}
    finally:
        store.close()


async def test_two_servers_on_one_database_see_one_graph(postgres_url: str, tmp_path: Path) -> None:
    """Issue 20: the graph is in the database, so what one server indexes or deletes is in
    the other's graph; neither keeps a graph file of its own."""
    one = make_engine(tmp_path / "one", store=postgres_url, graph="regex")
    other = make_engine(tmp_path / "other", store=postgres_url, graph="regex")
    try:
        async with serving(one) as first, serving(other) as second:
            writer, reader = Calls(first), Calls(second)
            texts = [
                ("polar-2", "Olav Bjaaland grew up in Morgedal. He made the expedition skis."),
                ("polar-3", "Morgedal lies in Telemark, where Sondre Norheim shaped skiing."),
            ]
            documents = [{"id": i, "text": t} for i, t in texts]
            await writer.result("index/add", {"documents": documents, "chunk": False})
            near = {"op": "neighbors", "seedIds": ["morgedal"], "hops": 1}
            nodes = {node["id"] for node in (await reader.result("graph", near))["nodes"]}
            assert {"telemark", "olav bjaaland"} <= nodes
            await reader.result("index/delete", {"ids": ["polar-3"]})
            nodes = {node["id"] for node in (await writer.result("graph", near))["nodes"]}
            assert "olav bjaaland" in nodes and "telemark" not in nodes
        assert not list((tmp_path / "one").rglob("*.sqlite3*"))
        assert not list((tmp_path / "other").rglob("*.sqlite3*"))
    finally:
        one.close()
        other.close()


def test_a_setting_another_request_set_first_is_read_inside_a_snapshot(postgres_url: str) -> None:
    # Found under load: concurrent first retrieves each set the calibration
    # default inside their REPEATABLE READ snapshot; the later insert failed to
    # serialise and the retrieve was answered -32010 with the database up.
    reader, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    with reader.snapshot():
        assert reader.setting("race.name") is None  # the snapshot is taken here
        assert other.setting_default("race.name", "first") == "first"
        assert reader.setting_default("race.name", "second") == "first"
    assert reader.setting("race.name") == "first"
    reader.close()
    other.close()
