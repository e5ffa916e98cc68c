"""Listing and deleting tenants (``rcpkit tenants list|delete``, issue 34).

A tenant's data lives in several places: its documents, chunks, postings and
vectors in the store, its version history and statistics (BM25, vocabulary,
calibration sample), its idempotency keys, its engine state (feedback,
memories, trajectories), its knowledge graph (a file beside the index, or a
schema in PostgreSQL) and the caches derived from all of it (the mirror and
ANN files). Deleting it removes all of them:

1. its live documents are deleted in one ordinary commit, so every process
   following the store (mirror, dense index, graph) sees them retire;
2. every row of the tenant is purged from the database (``Store.purge_tenant``),
   the graph schema dropped (PostgreSQL) or its file removed, its embedded
   state rows deleted;
3. after the engine closed, the local cache files (``index.mirror``,
   ``index.usearch``, ``postgres.mirror``) are removed: they may hold the
   retired rows' terms and vectors, and are rebuilt from the store on open.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from rcpkit.engine.engine import Engine
from rcpkit.engine.graph.tenants import graph_name
from rcpkit.engine.ingest.indexer import delete_documents

__all__ = ["TenantFigures", "TenantRemoval", "cache_files", "delete_tenant", "list_tenants"]

_STATE_FILES = ("feedback.sqlite3", "memory.sqlite3")  # the embedded state (state/embedded)
_CACHE_NAMES = ("index.mirror", "index.usearch", "postgres.mirror")


@dataclass(frozen=True, slots=True)
class TenantFigures:
    tenant: str  # "" is the unscoped caller's space
    documents: int
    chunks: int
    version: int  # the tenant's own (store.tenant_versions)


@dataclass(slots=True)
class TenantRemoval:
    """What a deletion removed (or, in a dry run, would remove)."""

    tenant: str
    documents: int
    chunks: int
    rows: dict[str, int] = field(default_factory=dict)  # table → rows purged
    files: list[str] = field(default_factory=list)  # graph, state and cache files


def list_tenants(engine: Engine) -> list[TenantFigures]:
    store = engine.store
    figures = []
    for tenant in store.tenancy.names():
        documents, chunks = store.count(tenant)
        figures.append(TenantFigures(tenant, documents, chunks, store.tenancy.latest(tenant)))
    return figures


def delete_tenant(engine: Engine, tenant: str, dry_run: bool = False) -> TenantRemoval | None:
    """Delete ``tenant`` with all its data; None when the store knows no such tenant.

    The engine stays open; call :func:`cache_files` after closing it and remove those.
    """
    store = engine.store
    if tenant not in store.tenancy.names():
        return None
    documents, chunks = store.count(tenant)
    removal = TenantRemoval(tenant, documents, chunks)
    name = graph_name(tenant)
    graph_files = sorted((engine.config.index / "graph").glob(f"{name}.sqlite3*"))
    removal.files = [str(path) for path in graph_files]
    if dry_run:
        return removal
    live = [doc_id for doc_id, _, _ in store.live_documents(tenant)]
    if live:
        delete_documents(engine, live, tenant)
    if engine.graphs is not None:
        engine.graphs.close()  # reopened on next use; its file or schema goes now
    removal.rows = store.purge_tenant(tenant, [f"graph_{name}"])
    for path in graph_files:
        path.unlink(missing_ok=True)
    for state in _STATE_FILES:
        path = engine.config.index / state
        if path.is_file():
            with closing(sqlite3.connect(path)) as connection, connection:
                table = "feedback" if state.startswith("feedback") else "memories"
                found = connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
                ).fetchone()
                if found is not None:
                    deleted = connection.execute(f"DELETE FROM {table} WHERE tenant = ?", (tenant,))
                    removal.rows[f"{state}:{table}"] = deleted.rowcount
    return removal


def cache_files(index: Path) -> list[Path]:
    """The derived cache files in an index folder (rebuilt from the store when absent)."""
    return [index / name for name in _CACHE_NAMES if (index / name).exists()]
