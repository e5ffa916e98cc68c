"""Assembling an engine: open the store, start the model slots, wire rewriter and graphs.

The only module that sees both the resources (``rcpkit.engine.engine``) and the
pipeline: the rewriter's pseudo-relevance feedback is a plain retrieve, handed
to it here as a callable, so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rcpkit.engine.config import EngineConfig
from rcpkit.engine.engine import Engine, ModelSlot
from rcpkit.engine.graph.tenants import Graphs
from rcpkit.engine.models import Embedder, load_embedder, load_sparse_encoder
from rcpkit.engine.request import EngineRequest, Subrequest
from rcpkit.engine.retrieve.cursors import cursor_secret
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.state.base import EngineState
from rcpkit.engine.state.embedded import embedded_state
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.sqlite import SQLiteStore
from rcpkit.engine.transform.rewriter import Rewriter
from rcpkit.protocol import messages as m

if TYPE_CHECKING:
    from rcpkit.engine.store._pg_dense import HnswSettings

__all__ = [
    "bm25_settings",
    "hnsw_settings",
    "is_postgres_url",
    "open_engine",
    "open_state",
    "open_store",
]


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

    def passages(text: str, k: int, request: EngineRequest) -> Sequence[str]:
        # Pseudo-relevance feedback: a plain hybrid retrieve, never itself rewritten.
        result = retrieve(engine, m.RetrieveParams(query=text, k=k), Subrequest(request))
        return [hit.text or "" for hit in result.hits]

    _bind_identity(config, store, identity, int(dimension))
    graphs = Graphs(store, config.index / "graph", config.graph) if config.graph else None
    engine = Engine(
        config,
        slot,
        sparse,
        store=store,
        identity=identity,
        dimension=int(dimension),
        cursor_secret=cursor_secret(store),
        rewriter=Rewriter(store, passages),
        graphs=graphs,
        state=open_state(config, store),
    )
    return engine


def open_state(config: EngineConfig, store: Store) -> EngineState:
    """Feedback, memories and trajectories: in the shared database when the store is one.

    A standby cannot write, so a server on one keeps them beside its index, its own.
    """
    if is_postgres_url(config.store):
        from rcpkit.engine.state.postgres import postgres_state
        from rcpkit.engine.store.postgres import PostgresStore

        assert isinstance(store, PostgresStore)
        if not store.read_only:
            return postgres_state(store, config.quarantine_reports, config.session_ttl_seconds)
    return embedded_state(config.index, config.quarantine_reports, config.session_ttl_seconds)


def _bind_identity(config: EngineConfig, store: Store, identity: str, dimension: int) -> None:
    # §15.7: an index is bound to the model that embedded it.
    # Set-if-absent: servers starting together on a new shared store agree on one.
    recorded = store.setting_default("embed.identity", identity)
    if recorded != identity:
        raise ValueError(
            f"index {config.store or config.index} was built with {recorded}, "
            f"not {identity}; re-index into a new folder (or database) to change models"
        )
    # Only once the identity is ours: a server that lost the race records nothing.
    store.setting_default("embed.dimension", str(dimension))


def hnsw_settings(config: EngineConfig) -> HnswSettings:
    from rcpkit.engine.store._pg_dense import HnswSettings

    return HnswSettings(
        config.hnsw_m,
        config.hnsw_ef_construction,
        config.hnsw_ef_search,
        build_memory_mb=config.hnsw_build_memory_mb,
    )


def bm25_settings(config: EngineConfig) -> dict[str, float | None]:
    """The configured BM25 parameters (None: the index's own, or the defaults if new)."""
    return {
        "k1": config.bm25_k1,
        "b": config.bm25_b,
        "title_weight": config.bm25_title_weight,
    }


def is_postgres_url(store: str | None) -> bool:
    return bool(store) and str(store).startswith(("postgres://", "postgresql://"))


def open_store(config: EngineConfig) -> Store:
    """The configured backend: the embedded SQLite file, or a shared PostgreSQL."""
    if config.store is None or config.store in ("", "sqlite"):
        return SQLiteStore(config.index / "index.sqlite3", bm25=bm25_settings(config))
    if is_postgres_url(config.store):
        # Imported on use: the `postgres` extra (psycopg) is optional.
        from rcpkit.engine.store.postgres import PostgresStore

        config.index.mkdir(parents=True, exist_ok=True)  # the mirror's cache lives here
        return PostgresStore(
            config.store,
            hnsw=hnsw_settings(config),
            prepared_statements=config.postgres_prepared_statements,
            bm25=bm25_settings(config),
            cache=config.index / "postgres.mirror",
        )
    raise ValueError(f"--store must be a postgres:// URL, not {config.store!r}")
