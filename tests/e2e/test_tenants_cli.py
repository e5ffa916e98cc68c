"""`rcpkit tenants list|delete` through the real CLI, on SQLite and PostgreSQL (issue 34).

Two tenants are written (with a knowledge graph, feedback and an idempotency key
for the one to delete); `delete --dry-run` changes nothing; `delete` leaves no row
of the tenant in any table, no graph file or schema, no cache file, and the other
tenant whole.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest
from test_ingest_cli import rcpkit

from rcpkit.engine.config import load_config
from rcpkit.engine.graph.tenants import graph_name
from rcpkit.engine.ingest._types import SourceDocument
from rcpkit.engine.ingest.indexer import index_documents
from rcpkit.engine.open import open_engine
from rcpkit.protocol import messages as m

_TEXTS = {
    "acme": ["Acme Corp ships rockets to Mars.", "Acme Corp hired Wile Coyote in Arizona."],
    "globex": ["Globex Inc builds reactors in Ohio.", "Globex Inc sells reactors to Springfield."],
}


def _seed(folder: Path, store: str | None) -> None:
    settings: dict[str, Any] = {"graph": "regex"}
    if store is not None:
        settings["store"] = store
    engine = open_engine(load_config(None, index=folder, embedder="hashing:64", **settings))
    try:
        for tenant, texts in _TEXTS.items():
            documents = [
                SourceDocument(
                    f"doc{i}", text, None, f"file:///{tenant}/{i}", "text", {}, None, f"{tenant}{i}"
                )
                for i, text in enumerate(texts)
            ]
            index_documents(
                engine, documents, tenant=tenant, idempotency_key=f"{tenant}\x1fkey",
                result_of=lambda report: "{}",
            )  # fmt: skip
        engine.feedback.record(
            m.FeedbackParams([m.FeedbackSignal("doc0#0", helpful=False, poison_suspected=True)]),
            "acme",
        )
    finally:
        engine.close()


def _tenants(folder: Path, *store: str) -> dict[str, dict[str, Any]]:
    done = rcpkit("tenants", "list", "--index", str(folder), *store, "--json")
    assert done.returncode == 0, done.stderr
    return {row["tenant"]: row for row in map(json.loads, done.stdout.splitlines())}


def _check_deletion(folder: Path, store: list[str]) -> None:
    before = _tenants(folder, *store)
    assert set(before) == {"acme", "globex"}
    assert before["acme"]["documents"] == 2 and before["acme"]["version"] == 1
    dry = rcpkit("tenants", "delete", "acme", "--dry-run", "--index", str(folder), *store)
    assert dry.returncode == 0, dry.stderr
    assert "would delete tenant 'acme': 2 documents" in dry.stdout
    assert _tenants(folder, *store) == before
    done = rcpkit("tenants", "delete", "acme", "--index", str(folder), *store)
    assert done.returncode == 0, done.stderr
    assert "deleted tenant 'acme'" in done.stdout
    for name in ("index.mirror", "index.usearch", "postgres.mirror"):
        assert not (folder / name).exists(), name  # rebuilt from the store on next open
    after = _tenants(folder, *store)
    assert set(after) == {"globex"} and after["globex"] == before["globex"]
    again = rcpkit("tenants", "delete", "acme", "--index", str(folder), *store)
    assert again.returncode == 1 and "no tenant 'acme'" in again.stderr
    assert not list((folder / "graph").glob(f"{graph_name('acme')}.sqlite3*"))
    assert list((folder / "graph").glob(f"{graph_name('globex')}.sqlite3")) or "--store" in store


def test_tenants_delete_removes_every_row_file_and_cache_on_sqlite(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    _seed(folder, None)
    assert (folder / "graph" / f"{graph_name('acme')}.sqlite3").is_file()
    _check_deletion(folder, ["--embedder", "hashing:64"])
    with closing(sqlite3.connect(folder / "index.sqlite3")) as connection:
        for table in ("documents", "chunks", "vocabulary", "tenant_versions"):
            (left,) = connection.execute(
                f"SELECT count(*) FROM {table} WHERE tenant = 'acme'"
            ).fetchone()
            assert left == 0, table
        _check_floor_only(connection, "?")
        (keys,) = connection.execute(
            "SELECT count(*) FROM idempotency WHERE key LIKE 'acme%'"
        ).fetchone()
        assert keys == 0
        (fts,) = connection.execute("SELECT count(*) FROM chunks_fts").fetchone()
        (chunks,) = connection.execute("SELECT count(*) FROM chunks").fetchone()
        assert fts == chunks  # no posting left of a purged chunk
    with closing(sqlite3.connect(folder / "feedback.sqlite3")) as connection:
        assert (
            connection.execute("SELECT count(*) FROM feedback WHERE tenant = 'acme'").fetchone()[0]
            == 0
        )


def test_tenants_delete_removes_every_row_and_the_graph_schema_on_postgres(
    postgres_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    _seed(folder, postgres_url)
    _check_deletion(folder, ["--store", postgres_url, "--embedder", "hashing:64"])
    with psycopg.connect(postgres_url) as connection:
        for table in (
            "documents", "chunks", "postings", "term_stats", "corpus_stats", "vocabulary",
            "feedback", "tenant_versions",
        ):  # fmt: skip
            (left,) = connection.execute(
                f"SELECT count(*) FROM {table} WHERE tenant = 'acme'"
            ).fetchone()
            assert left == 0, table
        _check_floor_only(connection, "%s")
        schemas = {row[0] for row in connection.execute("SELECT nspname FROM pg_namespace")}
        assert f"graph_{graph_name('acme')}" not in schemas
        assert f"graph_{graph_name('globex')}" in schemas
        (keys,) = connection.execute(
            "SELECT count(*) FROM idempotency WHERE key LIKE 'acme%'"
        ).fetchone()
        assert keys == 0


def _check_floor_only(connection: Any, mark: str) -> None:
    """What is left of the tenant: one floor, the number after its last (issue 52), so a
    tenant of that name created again never serves one of its old numbers."""
    rows = connection.execute(
        f"SELECT seq, version FROM tenant_floors WHERE tenant = {mark}", ("acme",)
    ).fetchall()
    assert [row[0] for row in rows] == [3]  # its write was 1, its deletion 2


@pytest.mark.parametrize("name", ["", "   "])
def test_tenants_delete_refuses_the_unscoped_space(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "idx"
    _seed(folder, None)
    done = rcpkit("tenants", "delete", name, "--index", str(folder))
    assert done.returncode == 2 and "name a tenant" in done.stderr
