"""Store contract tests: written against the Store interface, run for every backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from rcpkit.engine.store.base import DocumentRow, NewChunk, Store, WriteBatch
from rcpkit.engine.store.sqlite import SQLiteStore


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
    assert [k for k, _ in store.lexical(["alpha"], 10)] == []
    assert [k for k, _ in store.lexical(["alpha"], 10, None, 1)] == [first.added[0][0]]
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
