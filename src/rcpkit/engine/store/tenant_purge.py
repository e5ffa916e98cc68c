"""Every row of one tenant, gone from a store's database (``rcpkit tenants delete``).

Run after the tenant's live documents were deleted in one ordinary commit
(``engine.ingest.tenants``), so every process following the store (its mirror,
its dense index, its graph) has seen them retire; what is left are retired
rows, the tenant's version history, its vocabulary and statistics, its
idempotency keys and, in PostgreSQL, its engine state and graph schema. The
SQL is written with ``?`` parameters (``tenant_versions.Dialect``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rcpkit.engine.store.calibration import setting_prefix
from rcpkit.engine.store.tenant_versions import Dialect, forget

__all__ = ["POSTGRES_TABLES", "SQLITE_TABLES", "purge"]

# Tables with a ``tenant`` column, beside documents and chunks, per backend.
SQLITE_TABLES = ("vocabulary",)
POSTGRES_TABLES = (
    "vocabulary", "term_stats", "corpus_stats", "feedback", "memories", "trajectories",
)  # fmt: skip
# Tables keyed by chunk key, per backend (the FTS5 table by its rowid).
_SQLITE_KEYED = (("chunks_fts", "rowid"), ("splade", "key"))
_POSTGRES_KEYED = (("postings", "key"), ("splade", "key"))
_GROUP = 500


def purge(
    dialect: Dialect,
    connection: Any,
    tenant: str,
    *,
    postgres: bool,
    schemas: Sequence[str] = (),
) -> dict[str, int]:
    """Delete ``tenant``'s rows in one transaction's ``connection``; rows per table.

    The one floor row that refuses the tenant's old version numbers stays
    (``tenant_versions.forget``).
    """
    counts: dict[str, int] = {}
    keys = [
        int(row[0])
        for row in dialect.run(
            connection, "SELECT key FROM chunks WHERE tenant = ?", (tenant,)
        ).fetchall()
    ]
    for table, column in _POSTGRES_KEYED if postgres else _SQLITE_KEYED:
        counts[table] = 0
        for start in range(0, len(keys), _GROUP):
            group = keys[start : start + _GROUP]
            marks = ",".join("?" * len(group))
            counts[table] += _deleted(
                dialect.run(connection, f"DELETE FROM {table} WHERE {column} IN ({marks})", group)
            )
    for table in ("chunks", "documents", *(POSTGRES_TABLES if postgres else SQLITE_TABLES)):
        counts[table] = _deleted(
            dialect.run(connection, f"DELETE FROM {table} WHERE tenant = ?", (tenant,))
        )
    # §7.10 keys live in the tenant's space: "<tenant>\x1f<key>" (handlers.engine).
    prefix = f"{tenant}\x1f"
    counts["idempotency"] = _deleted(
        dialect.run(
            connection,
            "DELETE FROM idempotency WHERE substr(key, 1, ?) = ?",
            (len(prefix), prefix),
        )
    )
    # The tenant's agreed confidence figures (store.calibration), one per size class.
    named = setting_prefix(tenant)
    counts["settings"] = _deleted(
        dialect.run(
            connection, "DELETE FROM settings WHERE substr(name, 1, ?) = ?", (len(named), named)
        )
    )
    forget(dialect, connection, tenant)
    for schema in schemas:
        if postgres:  # a name we derived (graph_<hex>), never the caller's text
            dialect.run(connection, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    return counts


def _deleted(cursor: Any) -> int:
    return max(0, int(getattr(cursor, "rowcount", 0) or 0))
