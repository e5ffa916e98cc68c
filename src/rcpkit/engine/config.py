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
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

from rcpkit.engine.store.dense import DensePolicy

__all__ = ["DEFAULT_FILTER_FIELDS", "EngineConfig", "default_index_path", "load_config"]

# Fields every ingested document carries (see rcpkit.engine.ingest), plus the
# common ones clients set through index/add meta.
DEFAULT_FILTER_FIELDS: dict[str, str] = {
    "path": "keyword",
    "ext": "keyword",
    "mtime": "date",
    "lang": "keyword",
    "tag": "keyword",
    "year": "int",
    "date": "date",
}


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Typed engine configuration (file + environment, see rcpkit.engine.config)."""

    index: Path  # local side state (feedback, memory, graph); the SQLite index unless `store`
    # None: the embedded SQLite file under `index`; "postgres://…": a shared PostgreSQL.
    store: str | None = None
    embedder: str | None = None  # None: the bundled MiniLM
    sparse: str | None = None  # e.g. "splade-tiny" to enable learned sparse
    writable: bool = True
    filter_fields: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_FILTER_FIELDS))
    max_k: int = 200
    default_candidate_k: int = 100
    max_chunk_tokens: int = 200
    chunk_overlap_tokens: int = 32
    embed_batch_limit: int = 256
    max_add_documents: int = 4096  # per index/add; larger batches are -32013
    snapshot_retention: int = 64  # versions a pinned retrieve or a cursor can still read
    # §7.10: how long a repeat of an index/add `_meta.idempotencyKey` returns the original
    # result; older keys are collected with old versions (a later repeat writes again).
    idempotency_retention_seconds: int = 86_400
    cross_encoder: str | None = None  # an ONNX cross-encoder folder, or "st:<name>"
    max_rerank: int = 100  # rerank.maxCandidates
    # §15.2: URI prefixes of ingested files the operator vouches for; nothing else is trusted.
    trusted_sources: list[str] = field(default_factory=list)
    session_ttl_seconds: int = 3600  # §7.7.3 trajectory state lifetime
    quarantine_reports: int = 3  # distinct sessions reporting a document before it is withheld
    graph: str | None = None  # "spacy" (NER + noun phrases) or "regex"; None: no graph
    threads: int = 2
    dense_policy: DensePolicy = field(default_factory=DensePolicy)


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
    for key, value in values.items():
        _check_type(key, value, path)
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


_DESCRIBED = {
    str: "a string",
    bool: "true or false",
    int: "an integer",
    dict: "a table",
    list: "an array",
}


def _check_type(key: str, value: Any, path: Path | None) -> None:
    """One clear line for a wrongly typed setting, before it reaches the dataclass.

    The allowed type is EngineConfig's annotation (a path is written as a string).
    """
    wanted, items = _toml_type(get_type_hints(EngineConfig)[key])
    fits = isinstance(value, wanted) and not (wanted is int and isinstance(value, bool))
    if fits and items is not None:
        fits = all(isinstance(item, items) for item in _members(value))
    if not fits:
        allowed = _DESCRIBED.get(wanted, wanted.__name__)
        if items is not None:
            allowed += " of strings" if items is str else f" of {items.__name__} values"
        raise ValueError(f"{path}: [engine] {key} = {value!r} is not allowed; it takes {allowed}")


def _toml_type(hint: Any) -> tuple[type, type | None]:
    """(the TOML value's type, its members' type for a table or array) for an annotation."""
    if isinstance(hint, UnionType):  # `str | None`: a file sets the value, never None
        hint = next(arg for arg in get_args(hint) if arg is not type(None))
    if hint is Path:
        return str, None
    origin = get_origin(hint)
    if origin is None:
        return hint, None
    return origin, get_args(hint)[-1]


def _members(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else list(value)
