"""``rcpkit db migrate|status|reindex|defer-index --store URL``: a shared PostgreSQL store;
``rcpkit db shards init|status|rebalance --store shards.toml``: a registry's shards (issue 32)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run"]

HELP = "manage a shared PostgreSQL store"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["migrate", "status", "reindex", "defer-index", "shards"],
        help="reindex: (re)build the HNSW vector index concurrently;"
        " defer-index: drop it for a bulk load (until reindex);"
        " shards init|status: every shard of a registry (--store shards.toml)",
    )
    parser.add_argument(
        "shards_action", nargs="?", choices=["init", "status", "rebalance"],
        metavar="init|status|rebalance",
        help="with `shards`: init migrates every shard; status reports each one;"
        " rebalance moves documents to their home shard (after shards were added)",
    )  # fmt: skip
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="postgres://… (or $RCPKIT_STORE); with `shards`, the registry file",
    )
    parser.add_argument("--config", type=Path, default=None, help="TOML config file")
    parser.add_argument(
        "--graph",
        choices=["spacy", "regex"],
        default=None,
        help="with `shards rebalance`: the graph extractor the servers use, so their"
        " knowledge graphs follow the chunks a move gives new keys",
    )


def run(args: argparse.Namespace) -> int:
    """Schema migrations and the vector index of the store ``--store`` names."""
    # Imported here, not above: declaring the options must stay cheap (psycopg).
    from rcpkit.engine.config import load_config
    from rcpkit.engine.open import is_postgres_url
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store.postgres import connect

    config = load_config(args.config, store=args.store, graph=args.graph)
    if args.action == "shards":
        return _shards(args.shards_action, config)
    if args.shards_action is not None:
        raise ValueError(f"`rcpkit db {args.action}` takes no {args.shards_action!r}")
    if not is_postgres_url(config.store):
        raise ValueError("rcpkit db needs --store postgres://… (or RCPKIT_STORE)")
    assert config.store is not None
    latest = migrations.MIGRATIONS[-1].version
    with connect(config.store) as connection:
        if args.action == "status":
            applied = migrations.applied_version(connection)
            print(f"schema version {applied} (this rcpkit: {latest})")
            return 0 if applied == latest else 1
        if args.action in ("reindex", "defer-index"):
            return _vector_index(connection, args.action, latest, config)
        version, done = migrations.migrate(connection)
    for step in done:
        print(f"applied {step.version:04d}_{step.name}")
    print(f"schema version {version}" + ("" if done else " (up to date)"))
    return 0


def _vector_index(connection: Any, action: str, latest: int, config: Any) -> int:
    """A bulk load: ``defer-index`` drops the HNSW index, ``reindex`` builds it once."""
    from rcpkit.engine.open import hnsw_settings
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store.postgres.dense import defer_vector_index, rebuild_vector_index

    if migrations.applied_version(connection) != latest:
        raise ValueError("the store's schema is not current: run `rcpkit db migrate` first")
    if action == "reindex":
        print(rebuild_vector_index(connection, hnsw_settings(config)))
        return 0
    dropped = defer_vector_index(connection)
    print(
        ("dropped the HNSW index" if dropped else "no HNSW index to drop")
        + "; dense recall scans exactly until `rcpkit db reindex`"
    )
    return 0


def _shards(action: str | None, config: Any) -> int:
    """``init``: migrate every shard and the catalog; ``status``: one line per shard.

    Status exits 1 when a shard is unreachable or behind the schema, or holds a
    document whose home is another shard (a registry edited without a move).
    """
    from rcpkit.engine.open import is_shard_registry
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store.postgres import connect
    from rcpkit.engine.store.sharded.registry import load_registry

    if action is None:
        raise ValueError("rcpkit db shards init|status|rebalance --store shards.toml")
    if not is_shard_registry(config.store):
        raise ValueError("rcpkit db shards needs --store naming a registry file (.toml, .json)")
    registry = load_registry(Path(config.store))
    if action == "rebalance":
        return _rebalance(config, registry.shards[0].url)
    latest = migrations.MIGRATIONS[-1].version
    healthy = True
    for position, shard in enumerate(registry.shards):
        try:
            with connect(shard.url) as connection:
                if action == "init":
                    version, _ = migrations.migrate(connection)
                    print(f"{shard.name}: schema version {version}")
                    continue
                line, fine = _shard_status(connection, registry, position, latest)
        except ValueError as error:
            line, fine = f"unreachable ({error})", False
        print(f"{shard.name}: {line}")
        healthy = healthy and fine
    if action == "init":
        from rcpkit.engine.store.sharded.versions import SCHEMA

        with connect(registry.shards[0].url) as connection:
            connection.execute(SCHEMA)
        print(f"catalog: {registry.shards[0].name} ({len(registry.shards)} shards)")
    return 0 if healthy else 1


def _shard_status(connection: Any, registry: Any, position: int, latest: int) -> tuple[str, bool]:
    """One shard's line: schema, version, live documents and chunks, misplaced documents."""
    from rcpkit.engine.store import migrations

    applied = migrations.applied_version(connection)
    if applied != latest:
        return f"schema version {applied}, this rcpkit needs {latest}", False
    (version,) = connection.execute("SELECT version FROM versions").fetchone()
    rows = connection.execute(
        "SELECT tenant, doc_id FROM documents WHERE removed IS NULL"
    ).fetchall()
    (chunks,) = connection.execute("SELECT count(*) FROM chunks WHERE removed IS NULL").fetchone()
    misplaced = sum(1 for tenant, doc_id in rows if registry.home(tenant, doc_id) != position)
    line = f"version {version}, {len(rows)} documents, {chunks} chunks"
    if misplaced:
        line += f", {misplaced} documents whose home is another shard"
    return line, misplaced == 0


def _has_graphs(catalog: str) -> bool:
    """Whether the catalog holds a tenant's graph (a schema ``graph_<name>``)."""
    from rcpkit.engine.store.postgres import connect

    with connect(catalog) as connection:
        found = connection.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name LIKE 'graph\\_%'"
        ).fetchone()
    return found is not None


def _rebalance(config: Any, catalog: str) -> int:
    """Move every document to its home shard; resumable, and a no-op when nothing is off.

    Through the engine: a moved chunk changes key, and its graphs follow each step.
    """
    from rcpkit.engine.open import open_engine
    from rcpkit.engine.store.sharded import ShardedStore

    if config.graph is None and _has_graphs(catalog):
        raise ValueError(
            "the collection has knowledge graphs: pass the servers' --graph, so they follow"
            " the chunks a move gives new keys"
        )
    engine = open_engine(config)
    store = engine.store
    assert isinstance(store, ShardedStore)
    graphs = engine.graphs
    try:
        moved = store.rebalance(report=print, moved=None if graphs is None else graphs.apply)
    finally:
        engine.close()
    print(f"moved {moved} documents" if moved else "every document is on its home shard")
    return 0
