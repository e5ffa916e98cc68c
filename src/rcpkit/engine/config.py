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
    bm25_k1 = 0.9                  # BM25, fixed when an index is created (also bm25_b,
    bm25_title_weight = 3.0        #   0.6); an existing index keeps its own
    idempotency_retention_seconds = 86400  # §7.10 keys older than this are collected
    array_fields = ["teams"]       # fields holding arrays (`contains` is membership on them)
    fetch_uris = ["file:///srv/scans/"]  # image blocks' `uri`s fetched from here only
    [engine.filter_fields]
    team = "keyword"
    teams = "keyword"

    [ingest]                       # how `rcpkit index` reads files (all optional)
    text_field = "text"            # .json/.jsonl: the field holding a record's text
    id_field = "_id"               # ... its id (absent: <file>#<position>)
    title_field = "title"          # ... its title
    table_mode = "row"             # .csv/.tsv: "row" (a document per row) or "table"
    [ingest.fields]
    categories = "tag"             # front-matter key -> meta field

Environment: ``RCPKIT_INDEX``, ``RCPKIT_EMBEDDER``, ``RCPKIT_SPARSE``, ``RCPKIT_STORE``,
``RCPKIT_READ_ONLY=1``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rcpkit.engine.config_rules import ENGINE_RULES, SettingError, check_setting, ingest_options
from rcpkit.engine.index.dense import DensePolicy
from rcpkit.engine.ingest_options import IngestOptions

__all__ = [
    "DEFAULT_ARRAY_FIELDS",
    "DEFAULT_FILTER_FIELDS",
    "EngineConfig",
    "default_index_path",
    "load_config",
]

# Fields every ingested document carries (see rcpkit.engine.ingest), plus the
# common ones clients set through index/add meta. `path` is text so `contains`
# is a substring test on it; `folders` lists every ancestor folder of a file.
DEFAULT_FILTER_FIELDS: dict[str, str] = {
    "path": "text",
    "folders": "keyword",
    "ext": "keyword",
    "mtime": "date",
    "lang": "keyword",  # a code document's language ("python"), else whatever meta says
    "modality": "keyword",  # "text", "code" or "image", set by the indexer on every chunk
    "tag": "keyword",
    "year": "int",
    "date": "date",
}
# §8: the fields that hold arrays, on which `contains` is element membership.
DEFAULT_ARRAY_FIELDS: tuple[str, ...] = ("folders", "tag")


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
    array_fields: list[str] = field(default_factory=lambda: list(DEFAULT_ARRAY_FIELDS))
    max_k: int = 200
    default_candidate_k: int = 100
    # A hybrid retrieve without candidateK reads each arm at least this many times the
    # page's depth (offset + k) deep: a candidate just past the depth in one arm and
    # near the top of the other fuses into the page (issue 50; docs/quality.md).
    fusion_depth_factor: int = 2
    max_chunk_tokens: int = 200
    chunk_overlap_tokens: int = 32
    embed_batch_limit: int = 256
    max_add_documents: int = 4096  # per index/add; larger batches are -32013
    snapshot_retention: int = 64  # versions a pinned retrieve or a cursor can still read
    # §7.10: how long a repeat of an index/add `_meta.idempotencyKey` returns the original
    # result; older keys are collected with old versions (a later repeat writes again).
    idempotency_retention_seconds: int = 86_400
    # MaxSim over the embedder's token vectors as rerank method "colbert": off by default
    # (with MiniLM it lowers nDCG@10 and costs seconds; issue 16).
    colbert_rerank: bool = False
    cross_encoder: str | None = None  # an ONNX cross-encoder folder, or "st:<name>"
    # Without a cross_encoder, rerank method "cross-encoder" is the engine's own hybrid
    # scorer (BM25 with the index's statistics + cosine, fused as retrieve fuses; issue 33).
    hybrid_rerank: bool = True
    max_rerank: int = 100  # rerank.maxCandidates
    # A chunk whose text repeats a better-ranked one's is left out of retrieve's hits
    # (rcpkit.engine.retrieve.duplicates; issue 36); below 1, so is one whose word
    # trigrams are at least this alike (Jaccard). Near copies are often distinct
    # known items (man pages differing in a program's name), hence 1.
    collapse_duplicates: bool = True
    duplicate_similarity: float = 1.0
    # §15.2: URI prefixes of ingested files the operator vouches for; nothing else is trusted.
    trusted_sources: list[str] = field(default_factory=list)
    # §4.8/§15.5: URI prefixes an image Content block's `uri` may be fetched from
    # (file://, http://, https://); none by default, so every `uri` block is -32602.
    fetch_uris: list[str] = field(default_factory=list)
    session_ttl_seconds: int = 3600  # §7.7.3 trajectory state lifetime
    quarantine_reports: int = 3  # distinct sessions reporting a document before it is withheld
    graph: str | None = None  # "spacy" (NER + noun phrases) or "regex"; None: no graph
    # Embedding batches run at once, one onnxruntime thread each (issue 51).
    threads: int = field(default_factory=lambda: os.cpu_count() or 2)
    ingest: IngestOptions = field(default_factory=IngestOptions)  # [ingest] loader settings
    dense_policy: DensePolicy = field(default_factory=DensePolicy)
    # PostgreSQL store: the pgvector HNSW index (built at first use, or by `rcpkit db
    # reindex`, which rebuilds it when m or ef_construction changed) and its search depth.
    hnsw_m: int = 16
    hnsw_ef_construction: int = 64
    hnsw_ef_search: int = 100
    hnsw_build_memory_mb: int = 1024  # maintenance_work_mem of an HNSW build
    # Server-side prepared statements (psycopg prepares a query run 5 times). Set false
    # behind pgbouncer in transaction mode without `max_prepared_statements` (< 1.21).
    postgres_prepared_statements: bool = True
    # The default retrieve's pseudo-relevance feedback pass (rcpkit.engine.retrieve.prf):
    # RM3 on the lexical arm from the first hybrid pass's top documents.
    prf: bool = True
    prf_documents: int = 10  # RM3 fbDocs
    prf_terms: int = 10  # RM3 fbTerms
    prf_dense_weight: float = 0.0  # Rocchio β on the query vector (0: the dense arm is kept)
    # No feedback pass when the feedback passages average fewer analysed terms than
    # this (titles, one-line descriptions: issue 33). 0: always.
    prf_min_feedback_terms: float = 30.0
    # The default retrieve's proximity stage (rcpkit.engine.retrieve.proximity): the
    # weight of a candidate's share of query-term pairs found close together. 0: off.
    proximity_weight: float = 0.15
    # The default retrieve's smoothing stage (rcpkit.engine.retrieve.smoothing): how far
    # each of the best candidates moves towards its nearest fellow candidates' scores. 0: off.
    smoothing_weight: float = 0.3
    # BM25 of both stores (rcpkit.engine.scoring.bm25.BM25): None takes the index's
    # own, recorded when it was created (then these, else k1 0.9, b 0.6, title 3). A
    # value naming others for an existing index is refused: re-index to change them.
    bm25_k1: float | None = None
    bm25_b: float | None = None
    bm25_title_weight: float | None = None  # a title hit's count; a body hit counts 1
    # Not a setting: the RAM folder where `serve --workers N`'s workers share the vector
    # matrix (given by their supervisor; index/_shared_vectors.py). None: each its own.
    shared_vectors: Path | None = None


def default_index_path() -> Path:
    """``$RCPKIT_INDEX``, else ``$XDG_DATA_HOME/rcpkit/index`` (``~/.local/share/...``)."""
    if os.environ.get("RCPKIT_INDEX"):
        return Path(os.environ["RCPKIT_INDEX"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "rcpkit" / "index"


def load_config(
    config_file: Path | None = None, *, index: Path | None = None, **overrides: Any
) -> EngineConfig:
    """The effective configuration; flags (``overrides``) win over env, env over the file.

    Every value is checked where it comes from: a bad one is a `SettingError` (a
    ValueError) naming the file, variable or flag, the key, the value and what is allowed.
    """
    values: dict[str, Any] = {}
    ingest: IngestOptions | None = None
    path = config_file or (Path("rcpkit.toml") if Path("rcpkit.toml").exists() else None)
    if path is not None:
        table = _read_toml(path)
        engine_table = table.get("engine", {})
        if not isinstance(engine_table, dict):
            raise SettingError(f"{path}: [engine] must be a table")
        for key, value in engine_table.items():
            values[key] = check_setting(ENGINE_RULES, f"{path} [engine]", key, value)
        if isinstance(table.get("ingest"), dict):
            ingest = ingest_options(table["ingest"], f"{path} [ingest]")
    for key, variable in _ENVIRONMENT.items():
        if os.environ.get(variable):
            values[key] = check_setting(ENGINE_RULES, variable, key, os.environ[variable])
    if os.environ.get("RCPKIT_READ_ONLY") in ("1", "true", "yes"):
        values["writable"] = False
    for key, value in overrides.items():
        if value is not None:
            flag = "--" + key.replace("_", "-")
            values[key] = check_setting(ENGINE_RULES, flag, key, value)
    if index is not None:
        values["index"] = check_setting(ENGINE_RULES, "--index", "index", index)
    if ingest is not None:
        values["ingest"] = ingest
    fields_config = {**DEFAULT_FILTER_FIELDS, **values.pop("filter_fields", {})}
    arrays = list(dict.fromkeys([*DEFAULT_ARRAY_FIELDS, *values.pop("array_fields", [])]))
    base = EngineConfig(index=Path(values.pop("index", default_index_path())).expanduser())
    config = replace(base, filter_fields=fields_config, array_fields=arrays, **values)
    if config.chunk_overlap_tokens >= config.max_chunk_tokens:
        raise SettingError(
            f"chunk_overlap_tokens = {config.chunk_overlap_tokens} — expected less than "
            f"max_chunk_tokens ({config.max_chunk_tokens})"
        )
    return config


_ENVIRONMENT = {
    "index": "RCPKIT_INDEX",
    "embedder": "RCPKIT_EMBEDDER",
    "sparse": "RCPKIT_SPARSE",
    "store": "RCPKIT_STORE",
}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise SettingError(f"{path}: not valid TOML ({error})") from None
