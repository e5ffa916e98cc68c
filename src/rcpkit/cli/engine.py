"""The engine from command-line options (``--index``, ``--config``, ``--store`` …)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from rcpkit.engine.config import EngineConfig, load_config
from rcpkit.engine.engine import Engine
from rcpkit.engine.open import in_databases, open_engine, open_store
from rcpkit.engine.store.base import Store

__all__ = ["open_from_args", "open_store_from_args", "require_index"]


def open_from_args(
    args: argparse.Namespace,
    *,
    create: bool = True,
    shared_vectors: Path | None = None,
    **overrides: Any,
) -> Engine:
    """The engine the flags name; ``create=False`` refuses an index that does not exist.

    ``shared_vectors``: the RAM folder a ``serve --workers`` worker shares the vector
    matrix in (``EngineConfig.shared_vectors``)."""
    overrides.setdefault("sparse", getattr(args, "sparse", None))
    overrides.setdefault("graph", getattr(args, "graph", None))
    overrides.setdefault("store", getattr(args, "store", None))
    config = load_config(args.config, index=args.index, embedder=args.embedder, **overrides)
    config = replace(config, shared_vectors=shared_vectors)
    if not create:
        require_index(config)
    return open_engine(config, create=create)


def open_store_from_args(args: argparse.Namespace) -> tuple[EngineConfig, Store]:
    """The existing store the flags name, without loading any model (stats, show, export)."""
    config = load_config(args.config, index=args.index, store=getattr(args, "store", None))
    require_index(config)
    return config, open_store(config, create=False)


def require_index(config: EngineConfig) -> None:
    """A read-only command never creates an index: a mistyped --index is an error."""
    if in_databases(config.store):
        return  # the database is the index; connecting creates nothing
    if not (config.index / "index.sqlite3").is_file():
        raise ValueError(
            f"no index at {config.index}: build one with `rcpkit index PATH --index "
            f"{config.index}` (or `rcpkit serve --create` to start an empty one)"
        )
