"""The backend an engine runs on, chosen once: the store, its state, its graphs' storage.

Issue 28: which database holds the index (the embedded SQLite file, or a
shared PostgreSQL) was asked of the store by ``isinstance`` and ``getattr`` in
four places. ``rcpkit.engine.open.open_backend`` now decides it once, from the
configuration, and hands the engine this record; nothing else in the engine
names a backend module or tests a store's class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rcpkit.engine.graph.storage import GraphStorage
from rcpkit.engine.state.base import EngineState
from rcpkit.engine.store.base import Store
from rcpkit.engine.store.vocabulary import Vocabulary

__all__ = ["Backend", "GraphStorageFactory"]

#: A tenant's graph storage from its name (``graph_name``) and the extractor's identity.
GraphStorageFactory = Callable[[str, str], GraphStorage]


@dataclass(frozen=True, slots=True)
class Backend:
    """What one configured backend provides, built once by ``open_backend``."""

    kind: Literal["sqlite", "postgres", "solr"]
    store: Store
    # A standby (PostgreSQL in recovery) takes no writes, whatever --read-only says.
    read_only: bool
    # Feedback, memories and trajectories (§7.11, §7.12, §11): beside the index or shared.
    state: EngineState
    # Where each tenant's knowledge graph lives (§7.9): a file of its own, or the database.
    graph_storage: GraphStorageFactory
    # The corpus vocabulary as rewriting and memories ask for it: read whole from a
    # store's table, or only the words asked for (SolrCloud, issue 48).
    vocabulary: Vocabulary
    # §7.7.1: whether a pinned indexVersion or a cursor reads the version it names. A
    # SolrCloud keeps only its latest state, so it does not (issue 48).
    snapshots: bool = True
