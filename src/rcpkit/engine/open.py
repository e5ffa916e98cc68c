"""Assembling an engine: open the backend, start the model slots, wire rewriter and graphs.

The only module that sees both the resources (``rcpkit.engine.engine``) and the
pipeline: the rewriter's pseudo-relevance feedback is a plain retrieve, handed
to it here as a callable, so neither imports the other. And the only module
that names a backend: :func:`open_backend` decides once, from the
configuration, whether the index is the embedded SQLite file or a shared
PostgreSQL, and builds the :class:`~rcpkit.engine.backend.Backend` the rest
of the engine uses (issue 28).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rcpkit.engine.backend import Backend
from rcpkit.engine.config import EngineConfig
from rcpkit.engine.engine import Engine, ModelSlot
from rcpkit.engine.fields import with_declared_fields
from rcpkit.engine.graph._store import GraphStore
from rcpkit.engine.graph.storage import GraphStorage
from rcpkit.engine.graph.tenants import Graphs
from rcpkit.engine.models import Embedder, embedder_spec, load_embedder, load_sparse_encoder
from rcpkit.engine.query import Query
from rcpkit.engine.request import EngineRequest, Subrequest
from rcpkit.engine.retrieve.cursors import cursor_secret
from rcpkit.engine.retrieve.pipeline import retrieve
from rcpkit.engine.state.base import EngineState
from rcpkit.engine.state.embedded import embedded_state
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.sqlite import SQLiteStore
from rcpkit.engine.store.vocabulary import WholeVocabulary
from rcpkit.engine.transform.rewriter import Rewriter

if TYPE_CHECKING:
    from rcpkit.engine.store.postgres import PostgresStore
    from rcpkit.engine.store.postgres.dense import HnswSettings
    from rcpkit.engine.store.solr import SolrStore

__all__ = [
    "bm25_settings",
    "hnsw_settings",
    "in_databases",
    "is_postgres_url",
    "is_solr_url",
    "open_backend",
    "open_engine",
    "open_store",
]


def open_engine(config: EngineConfig, *, create: bool = True) -> Engine:
    """Open (or, with ``create``, create) the index at ``config.index``; models load
    in the background.

    An existing index knows its model's identity and dimension, so nothing
    waits for the model; a new index waits once to learn them.
    """
    backend = open_backend(config, create=create)
    store = backend.store
    identity = store.setting("embed.identity")
    # An index of your own vectors (or hashed ones) names what it needs; a model is configured.
    model_spec = config.embedder if config.embedder is not None else embedder_spec(identity)
    slot = ModelSlot("embedding", lambda: load_embedder(model_spec, threads=config.threads))
    sparse = None
    if config.sparse:
        spec = None if config.sparse == "splade-tiny" else config.sparse
        sparse = ModelSlot("sparse", lambda: load_sparse_encoder(spec))
    dimension = store.setting("embed.dimension")
    if identity is None or dimension is None:
        model: Embedder = slot.get()
        identity, dimension = model.identity, str(model.dimension)

    def passages(text: str, k: int, request: EngineRequest) -> Sequence[str]:
        # Pseudo-relevance feedback: a plain hybrid retrieve, never itself rewritten.
        result = retrieve(engine, Query(text, k=k), Subrequest(request))
        return [hit.text or "" for hit in result.hits]

    _bind_identity(config, store, identity, int(dimension))
    # Fields the index declared for itself (rcpkit.engine.fields) are filterable here too.
    config = with_declared_fields(config, store)
    graphs = Graphs(backend.graph_storage, store.fetch, config.graph) if config.graph else None
    engine = Engine(
        config,
        slot,
        sparse,
        backend=backend,
        identity=identity,
        dimension=int(dimension),
        cursor_secret=cursor_secret(store),
        rewriter=Rewriter(store, backend.vocabulary, passages),
        graphs=graphs,
    )
    return engine


def open_backend(config: EngineConfig, *, create: bool = True) -> Backend:
    """The configured backend: its store, where its state and its graphs live.

    Embedded: the SQLite file, the engine state and one graph file per tenant
    beside it. PostgreSQL: the shared database holds the state and the graphs
    too (issue 20), so every server sees the same; a standby cannot write, so a
    server on one keeps its state beside its index, and reads a tenant's graph
    from the database once the primary has made it (an empty one until then).
    ``create`` is the embedded file's: a database is created by ``rcpkit db``.
    """
    folder = config.index / "graph"

    def graph_file(name: str, identity: str) -> GraphStorage:
        return GraphStore(folder / f"{name}.sqlite3", identity)

    if is_solr_url(config.store):
        # Issue 48: Solr holds the corpus; the engine state and graphs stay beside
        # this server (--index), and the server advertises no snapshots.
        from rcpkit.engine.store.solr.vocabulary import SolrVocabulary

        solr = _open_solr(config)
        state = _embedded_state(config)
        words = SolrVocabulary(solr.collection)
        return Backend("solr", solr, False, state, graph_file, words, snapshots=False)
    if not in_databases(config.store):
        embedded = _open_sqlite(config, create)
        state = _embedded_state(config)
        return Backend("sqlite", embedded, False, state, graph_file, WholeVocabulary(embedded))
    from rcpkit.engine.graph._pg_store import PostgresGraphStore
    from rcpkit.engine.state.postgres import postgres_state

    shared = _open_postgres(config)

    def graph_schema(name: str, identity: str) -> GraphStorage:
        if shared.read_only and not PostgresGraphStore.exists(shared, name):
            return GraphStore(":memory:", identity)
        return PostgresGraphStore(shared, name, identity)

    state = (
        _embedded_state(config)
        if shared.read_only
        else postgres_state(shared, config.quarantine_reports, config.session_ttl_seconds)
    )
    return Backend(
        "postgres", shared, shared.read_only, state, graph_schema, WholeVocabulary(shared)
    )


def _embedded_state(config: EngineConfig) -> EngineState:
    """Feedback, memories and trajectories in files beside the index."""
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
    from rcpkit.engine.store.postgres.dense import HnswSettings

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


def in_databases(store: str | None) -> bool:
    """Whether the index lives in a server (PostgreSQL, SolrCloud): then the server is
    the index, and ``--index`` holds only caches and local state."""
    return is_postgres_url(store) or is_solr_url(store)


def is_solr_url(store: str | None) -> bool:
    """Whether ``--store`` names a SolrCloud collection (issue 48)."""
    return bool(store) and str(store).startswith("solr://")


def open_store(config: EngineConfig, *, create: bool = True) -> Store:
    """The configured store alone (the admin commands'): SQLite, PostgreSQL, Solr."""
    if is_solr_url(config.store):
        return _open_solr(config)
    if is_postgres_url(config.store):
        return _open_postgres(config)
    return _open_sqlite(config, create)


def _open_sqlite(config: EngineConfig, create: bool) -> SQLiteStore:
    if config.store not in (None, "", "sqlite"):
        raise ValueError(f"--store must be a postgres:// or solr:// URL, not {config.store!r}")
    path = config.index / "index.sqlite3"
    return SQLiteStore(
        path, bm25=bm25_settings(config), create=create, shared_vectors=config.shared_vectors
    )


def _open_solr(config: EngineConfig) -> SolrStore:
    from rcpkit.engine.store.solr import SolrStore

    if config.sparse:
        raise ValueError("the Solr backend stores no learned-sparse weights: drop --sparse")
    config.index.mkdir(parents=True, exist_ok=True)  # the engine state lives here
    return SolrStore(config.store or "", bm25=bm25_settings(config))


def _open_postgres(config: EngineConfig) -> PostgresStore:
    # Imported on use: the `postgres` extra (psycopg) is optional.
    from rcpkit.engine.store.postgres import PostgresStore

    config.index.mkdir(parents=True, exist_ok=True)  # the mirror's cache lives here
    return PostgresStore(
        config.store or "",
        hnsw=hnsw_settings(config),
        prepared_statements=config.postgres_prepared_statements,
        bm25=bm25_settings(config),
        cache=config.index / "postgres.mirror",
    )
