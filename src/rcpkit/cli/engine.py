"""The engine from command-line options (``--index``, ``--config``, ``--store`` …)."""

from __future__ import annotations

import argparse
from typing import Any

from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine
from rcpkit.engine.open import open_engine

__all__ = ["open_from_args"]


def open_from_args(args: argparse.Namespace, **overrides: Any) -> Engine:
    overrides.setdefault("sparse", getattr(args, "sparse", None))
    overrides.setdefault("graph", getattr(args, "graph", None))
    overrides.setdefault("store", getattr(args, "store", None))
    config = load_config(args.config, index=args.index, embedder=args.embedder, **overrides)
    return open_engine(config)
