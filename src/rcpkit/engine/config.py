"""Engine configuration from a TOML file, environment variables and flags, in that order.

File: ``--config FILE``, else ``./rcpkit.toml`` when present, table ``[engine]``::

    [engine]
    index = "~/.local/share/rcpkit/index"
    embedder = "minilm"            # or a directory with model.onnx + tokenizer.json
    sparse = "splade-tiny"         # optional learned-sparse model for embed/sparse
    store = "postgres://user@db/rcpkit"  # optional: a PostgreSQL shared by many servers
    writable = true
    max_k = 200
    snapshot_retention = 64        # versions a pinned retrieve or a cursor can still read
    idempotency_retention_seconds = 86400  # §7.10 keys older than this are collected
    [engine.filter_fields]
    team = "keyword"

Environment: ``RCPKIT_INDEX``, ``RCPKIT_EMBEDDER``, ``RCPKIT_SPARSE``, ``RCPKIT_STORE``,
``RCPKIT_READ_ONLY=1``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from rcpkit.engine.engine import DEFAULT_FILTER_FIELDS, EngineConfig

__all__ = ["default_index_path", "load_config"]


def default_index_path() -> Path:
    """``$RCPKIT_INDEX``, else ``$XDG_DATA_HOME/rcpkit/index`` (``~/.local/share/...``)."""
    if os.environ.get("RCPKIT_INDEX"):
        return Path(os.environ["RCPKIT_INDEX"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "rcpkit" / "index"


def load_config(
    config_file: Path | None = None, *, index: Path | None = None, **overrides: Any
) -> EngineConfig:
    """The effective configuration; flags (``overrides``) win over env, env over the file."""
    values: dict[str, Any] = {}
    path = config_file or (Path("rcpkit.toml") if Path("rcpkit.toml").exists() else None)
    if path is not None:
        with path.open("rb") as handle:
            values.update(tomllib.load(handle).get("engine", {}))
    known = {field.name for field in fields(EngineConfig)}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"unknown [engine] settings in {path}: {', '.join(sorted(unknown))}")
    environment = {
        "index": os.environ.get("RCPKIT_INDEX"),
        "embedder": os.environ.get("RCPKIT_EMBEDDER"),
        "sparse": os.environ.get("RCPKIT_SPARSE"),
        "store": os.environ.get("RCPKIT_STORE"),
    }
    values.update({key: value for key, value in environment.items() if value})
    if os.environ.get("RCPKIT_READ_ONLY") in ("1", "true", "yes"):
        values["writable"] = False
    values.update({key: value for key, value in overrides.items() if value is not None})
    if index is not None:
        values["index"] = index
    fields_config = {**DEFAULT_FILTER_FIELDS, **values.pop("filter_fields", {})}
    base = EngineConfig(index=Path(values.pop("index", default_index_path())).expanduser())
    return replace(base, filter_fields=fields_config, **values)
