"""The engine's shared state: store, dense index, models and configuration."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcpkit.engine.graph.tenants import Graphs
from rcpkit.engine.models import Embedder, SparseEncoder, load_embedder, load_sparse_encoder
from rcpkit.engine.rerank import Reranker, load_reranker
from rcpkit.engine.retrieve.confidence import Calibration
from rcpkit.engine.retrieve.cursors import cursor_secret
from rcpkit.engine.state.feedback import FeedbackLog
from rcpkit.engine.state.memory import MemoryBank
from rcpkit.engine.state.trajectories import Trajectories
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.dense import DensePolicy
from rcpkit.engine.transform.rewriter import Rewriter
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = [
    "DEFAULT_FILTER_FIELDS",
    "Engine",
    "EngineConfig",
    "ModelSlot",
    "is_postgres_url",
    "open_engine",
    "open_store",
]

_CALIBRATION_SAMPLE = 4096  # vectors a shared store hands over for confidence calibration

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


class ModelSlot:
    """A model loaded in the background so the handshake never waits for it."""

    def __init__(self, name: str, load: Callable[[], Any]) -> None:
        self.name = name
        self._future: Future[Any] = Future()

        def run() -> None:
            try:
                self._future.set_result(load())
            except BaseException as error:  # reported on use, as -32010
                self._future.set_exception(error)

        threading.Thread(target=run, name=f"load-{name}", daemon=True).start()

    def get(self, checkpoint: Callable[[], None] | None = None) -> Any:
        while True:
            try:
                return self._future.result(timeout=0.05)
            except TimeoutError:
                if checkpoint is not None:
                    checkpoint()
            except Exception as error:
                raise RCPError(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    f"the {self.name} model is unavailable",
                    detail=str(error),
                ) from None


class Engine:
    """One index on disk with its models; indexing and retrieval live in their own modules."""

    def __init__(
        self,
        config: EngineConfig,
        embedder: ModelSlot,
        sparse: ModelSlot | None = None,
        *,
        store: Store,
        identity: str,
        dimension: int,
    ) -> None:
        self.config = config
        self.store = store
        self.embedder_slot = embedder
        self.sparse_slot = sparse
        self.identity = identity
        self.dimension = dimension
        self._check_identity()
        self.dense = store.open_dense(dimension, config.dense_policy)
        self.started = time.time()
        self.calibration = Calibration()
        self.cursor_secret = cursor_secret(store)
        self.capabilities_pagination = True
        self.trajectories = Trajectories(config.session_ttl_seconds)
        self.feedback = FeedbackLog(config.index / "feedback.sqlite3", config.quarantine_reports)
        self.memory = MemoryBank(config.index / "memory.sqlite3")
        self.rewriter = Rewriter(self)
        self.graphs = Graphs(self, config.graph) if config.graph else None
        self._rerankers: dict[str, Reranker] = {}
        self._rerankers_lock = threading.Lock()

    def calibrate(self) -> None:
        """Refresh the confidence calibration when the collection has grown (cheap no-op else)."""
        size = self.dense.live_count()
        if self.calibration.stale(size):
            self.calibration.update(self.dense.sample(_CALIBRATION_SAMPLE), size)

    def reranker(self, method: str, checkpoint: Callable[[], None] | None = None) -> Reranker:
        """The reranker for ``method`` (§7.6), built on first use."""
        with self._rerankers_lock:
            if method not in self._rerankers:
                spec = self.config.cross_encoder if method == "cross-encoder" else None
                self._rerankers[method] = load_reranker(spec, self.embedder(checkpoint))
            return self._rerankers[method]

    def dates_of(self, keys: Sequence[int], name: str) -> dict[int, int | None]:
        """A date field (epoch ms, as normalised at write time) per chunk key."""
        values = self.store.filter_values(keys, name)
        return {
            key: max(value) if isinstance(value, list) and value else
            value if isinstance(value, int) else None
            for key, value in values.items()
        }  # fmt: skip

    def _check_identity(self) -> None:
        # §15.7: an index is bound to the model that embedded it.
        # Set-if-absent: servers starting together on a new shared store agree on one.
        recorded = self.store.setting_default("embed.identity", self.identity)
        if recorded != self.identity:
            raise ValueError(
                f"index {self.config.store or self.config.index} was built with {recorded}, "
                f"not {self.identity}; re-index into a new folder (or database) to change models"
            )
        # Only once the identity is ours: a server that lost the race records nothing.
        self.store.setting_default("embed.dimension", str(self.dimension))

    def embedder(self, checkpoint: Callable[[], None] | None = None) -> Embedder:
        model: Embedder = self.embedder_slot.get(checkpoint)
        if model.identity != self.identity:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "the configured embedding model is not the one this index was built with",
                detail=f"index: {self.identity}; model: {model.identity}",
            )
        return model

    def sparse_encoder(self, checkpoint: Callable[[], None] | None = None) -> SparseEncoder | None:
        if self.sparse_slot is None:
            return None
        model: SparseEncoder = self.sparse_slot.get(checkpoint)
        return model

    def close(self) -> None:
        self.store.close()
        self.feedback.close()
        self.memory.close()
        if self.graphs is not None:
            self.graphs.close()


def open_engine(config: EngineConfig) -> Engine:
    """Open (or create) the index at ``config.index``; models load in the background.

    An existing index knows its model's identity and dimension, so nothing
    waits for the model; a new index waits once to learn them.
    """
    store = open_store(config)
    slot = ModelSlot("embedding", lambda: load_embedder(config.embedder, threads=config.threads))
    sparse = None
    if config.sparse:
        spec = None if config.sparse == "splade-tiny" else config.sparse
        sparse = ModelSlot("sparse", lambda: load_sparse_encoder(spec))
    identity = store.setting("embed.identity")
    dimension = store.setting("embed.dimension")
    if identity is None or dimension is None:
        model: Embedder = slot.get()
        identity, dimension = model.identity, str(model.dimension)
    return Engine(config, slot, sparse, store=store, identity=identity, dimension=int(dimension))


def is_postgres_url(store: str | None) -> bool:
    return bool(store) and str(store).startswith(("postgres://", "postgresql://"))


def open_store(config: EngineConfig) -> Store:
    """The configured backend: the embedded SQLite file, or a shared PostgreSQL."""
    if config.store is None or config.store in ("", "sqlite"):
        from rcpkit.engine.store.sqlite import SQLiteStore

        return SQLiteStore(config.index / "index.sqlite3")
    if is_postgres_url(config.store):
        from rcpkit.engine.store.postgres import PostgresStore

        config.index.mkdir(parents=True, exist_ok=True)  # local side state still lives here
        return PostgresStore(config.store)
    raise ValueError(f"--store must be a postgres:// URL, not {config.store!r}")
