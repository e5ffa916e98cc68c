"""What every engine and ingest setting accepts, checked once with one clear line per mistake.

A bad value fails as ``ValueError("rcpkit.toml [engine] max_k = 'lots' is not allowed;
it takes an integer ≥ 1")``: where it came from, the key, the value and what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from rcpkit.engine.index.dense import DensePolicy
from rcpkit.engine.ingest_options import IngestOptions
from rcpkit.protocol.filters._field_types import FIELD_KINDS

__all__ = ["ENGINE_RULES", "INGEST_RULES", "SettingError", "check_setting", "ingest_options"]


# What a `--store shards.toml` (issue 32's registry, retired by issue 48) is told.
REGISTRY_RETIRED = "the shard registry was retired; run SolrCloud: see docs/solr.md"


class SettingError(ValueError):
    """A setting outside what its key allows (a ValueError, so the CLI prints one line)."""


class _Refused(Exception):
    def __init__(self, allowed: str) -> None:
        super().__init__(allowed)
        self.allowed = allowed


Rule = Callable[[Any], Any]


def _whole(minimum: int) -> Rule:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise _Refused(f"an integer ≥ {minimum}")
        return value

    return check


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Refused("a string (not empty)")
    return value


def _weight(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _Refused("a number ≥ 0")
    return float(value)


def _between(low: float, high: float, *, open_low: bool = False, step: float = 0.0) -> Rule:
    bound = f"{low:g} < x ≤ {high:g}" if open_low else f"{low:g} ≤ x ≤ {high:g}"
    allowed = f"a number {bound}" + (f", a multiple of {step:g}" if step else "")

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Refused(allowed)
        above = value > low if open_low else value >= low
        if not (above and value <= high) or (step and (value / step) % 1):
            raise _Refused(allowed)
        return float(value)

    return check


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Refused("true or false")
    return value


def _choice(*names: str) -> Rule:
    def check(value: Any) -> str:
        if value not in names:
            raise _Refused("one of " + ", ".join(repr(name) for name in names))
        return str(value)

    return check


def _path(value: Any) -> Path:
    if isinstance(value, Path):
        return value.expanduser()
    return Path(_text(value)).expanduser()


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Refused("an array of strings")
    return list(value)


def _uri_prefixes(value: Any) -> list[str]:
    prefixes = _strings(value)
    for prefix in prefixes:
        scheme = prefix.split("://", 1)[0] if "://" in prefix else ""
        if scheme not in ("file", "http", "https") or prefix.endswith("://"):
            raise _Refused("an array of file://, http:// or https:// URI prefixes")
    return prefixes


def _model(name: str, files: tuple[str, ...], own: bool = False) -> Rule:
    """``own``: the caller's own vectors are allowed too (``vectors:[name:]dimension``)."""
    mine = ", 'vectors:[<name>:]<dimension>'" if own else ""
    allowed = f"{name!r}, 'hashing:<size>'{mine} or a folder holding {' and '.join(files)}"

    def check(value: Any) -> str:
        spec = _text(value)
        if spec == name or _hashing(spec) or (own and _own_vectors(spec)):
            return spec
        folder = Path(spec).expanduser()
        if folder.is_dir() and all((folder / name).is_file() for name in files):
            return spec
        raise _Refused(allowed)

    return check


def _own_vectors(spec: str) -> bool:
    prefix, _, rest = spec.partition(":")
    size = rest.rpartition(":")[2]
    return prefix == "vectors" and size.isdigit() and int(size) > 0


def _hashing(spec: str) -> bool:
    if spec == "hashing":
        return True
    prefix, _, size = spec.partition(":")
    return prefix == "hashing" and size.isdigit() and int(size) > 0


def _store(value: Any) -> str:
    spec = _text(value)
    if spec == "sqlite" or spec.startswith(("postgres://", "postgresql://", "solr://")):
        return spec
    if spec.endswith((".toml", ".json")):  # issue 48: one way past one machine
        raise SettingError(REGISTRY_RETIRED)
    raise _Refused("'sqlite', a postgres:// URL or a solr:// URL")


def _field_types(value: Any) -> dict[str, str]:
    kinds = ", ".join(sorted(FIELD_KINDS))
    if not isinstance(value, Mapping):
        raise _Refused(f"a table of field = type, type one of {kinds}")
    for name, kind in value.items():
        if kind not in FIELD_KINDS or kind == "geo":
            raise _Refused(f"a table of field = type; {name} = {kind!r} is not one of {kinds}")
    return dict(value)


def _dense_policy(value: Any) -> DensePolicy:
    if isinstance(value, DensePolicy):
        return value
    known = {field.name for field in fields(DensePolicy)}
    if not isinstance(value, Mapping) or not set(value) <= known:
        raise _Refused(f"a table of {', '.join(sorted(known))}")
    return DensePolicy(**value)


def _names(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(key, str) and isinstance(name, str) and name for key, name in value.items()
    ):
        raise _Refused("a table of front-matter key = meta field name")
    return dict(value)


ENGINE_RULES: Mapping[str, Rule] = {
    "index": _path,
    "store": _store,
    "embedder": _model("minilm", ("model.onnx", "tokenizer.json"), own=True),
    "sparse": _model("splade-tiny", ("config.json", "model.safetensors", "tokenizer.json")),
    "writable": _flag,
    "filter_fields": _field_types,
    "array_fields": _strings,
    "max_k": _whole(1),
    "default_candidate_k": _whole(1),
    "fusion_depth_factor": _whole(1),
    "max_chunk_tokens": _whole(8),
    "chunk_overlap_tokens": _whole(0),
    "embed_batch_limit": _whole(1),
    "max_add_documents": _whole(1),
    "snapshot_retention": _whole(1),
    "idempotency_retention_seconds": _whole(0),  # 0: a repeat writes again at once
    "colbert_rerank": _flag,
    "hybrid_rerank": _flag,
    "cross_encoder": _text,
    "max_rerank": _whole(1),
    "collapse_duplicates": _flag,
    "duplicate_similarity": _between(0.5, 1.0),
    "trusted_sources": _strings,
    "fetch_uris": _uri_prefixes,
    "session_ttl_seconds": _whole(0),
    "quarantine_reports": _whole(1),
    "graph": _choice("spacy", "regex"),
    "threads": _whole(1),
    "dense_policy": _dense_policy,
    # pgvector's own bounds; ef_construction >= 2 * m is checked with both (HnswSettings).
    "hnsw_m": _whole(2),
    "hnsw_ef_construction": _whole(4),
    "hnsw_ef_search": _whole(1),
    "hnsw_build_memory_mb": _whole(1),
    "postgres_prepared_statements": _flag,
    "prf": _flag,
    "prf_documents": _whole(2),
    "prf_terms": _whole(1),
    "prf_dense_weight": _weight,
    "prf_min_feedback_terms": _between(0.0, 10_000.0),
    "proximity_weight": _between(0.0, 10.0),
    "smoothing_weight": _between(0.0, 1.0),
    # BM25 (rcpkit.engine.scoring.bm25.BM25): weights in quarters keep f exact.
    "bm25_k1": _between(0.0, 10.0, open_low=True),
    "bm25_b": _between(0.0, 1.0),
    "bm25_title_weight": _between(0.0, 16.0, open_low=True, step=0.25),
}

INGEST_RULES: Mapping[str, Rule] = {
    "text_field": _text,
    "id_field": _text,
    "title_field": _text,
    "table_mode": _choice("row", "table"),
    "fields": _names,
}


def check_setting(rules: Mapping[str, Rule], where: str, key: str, value: Any) -> Any:
    """``value`` converted for ``key``, or a `SettingError` naming where, key and value."""
    rule = rules.get(key)
    if rule is None:
        raise SettingError(f"{where}: unknown setting {key!r}; known: {', '.join(sorted(rules))}")
    try:
        return rule(value)
    except _Refused as refused:
        raise SettingError(
            f"{where} {key} = {value!r} is not allowed; it takes {refused.allowed}"
        ) from None


def ingest_options(table: Mapping[str, Any], where: str) -> IngestOptions:
    """The ``[ingest]`` table as `IngestOptions`, every key checked."""
    values = {key: check_setting(INGEST_RULES, where, key, value) for key, value in table.items()}
    if "fields" in values:
        values["meta_fields"] = values.pop("fields")
    return IngestOptions(**values)
