"""``rcpkit db migrate|status|reindex|defer-index --store URL``: a shared PostgreSQL store."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run"]

HELP = "manage a shared PostgreSQL store"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=["migrate", "status", "reindex", "defer-index"],
        help="reindex: (re)build the HNSW vector index concurrently;"
        " defer-index: drop it for a bulk load (until reindex)",
    )
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="postgres://… (or $RCPKIT_STORE)",
    )
    parser.add_argument("--config", type=Path, default=None, help="TOML config file")


def run(args: argparse.Namespace) -> int:
    """Schema migrations and the vector index of the store ``--store`` names."""
    # Imported here, not above: declaring the options must stay cheap (psycopg).
    from rcpkit.engine.config import load_config
    from rcpkit.engine.open import is_postgres_url
    from rcpkit.engine.store import migrations
    from rcpkit.engine.store.postgres import connect

    config = load_config(args.config, store=args.store)
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
