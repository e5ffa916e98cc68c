"""The scale-out store: one PostgreSQL (+ pgvector) shared by many stateless server processes.

Everything that defines an answer lives in the database: documents, chunks,
filter metadata (``jsonb``, GIN), vectors (``vector(d)``, HNSW), BM25 postings
and statistics, SPLADE postings, versions, settings (the cursor secret) and
idempotency results. So any process can serve any retained version (§7.7.1)
and accept any process's cursor (§10), and every read sees every process's
committed writes. The one thing held in the process is BM25's read side
(``_pg_mirror``): a cache of committed, versioned rows that follows the
database before any read of a version it has not seen, so it never decides an
answer the database would not give. Commits: ``writes``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path

from rcpkit.engine.index import QueryIndex, SnapshotRead
from rcpkit.engine.index._mirror import Mirror
from rcpkit.engine.index._mirror_cache import MirrorCache, cache_stamp
from rcpkit.engine.scoring.bm25 import resolve_bm25
from rcpkit.engine.store.postgres.connections import DIALECT, bound_by_deadline, connect
from rcpkit.engine.store.postgres.dense import HnswSettings
from rcpkit.engine.store.postgres.reads import Reads
from rcpkit.engine.store.postgres.source import PostgresSource
from rcpkit.engine.store.postgres.writes import Writes
from rcpkit.engine.store.tenant_versions import TenantVersions

__all__ = ["PostgresStore", "bound_by_deadline", "connect"]


class PostgresStore(Writes, Reads):
    """A store in a PostgreSQL database; thread-safe (a pool of checked connections, one writer).

    Its connections are ``connections``', its commits ``writes``', its reads
    ``reads``'; this class opens them and the query index that follows the database.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate: bool = True,
        pool_size: int = 32,
        pool_timeout: float = 30.0,
        hnsw: HnswSettings | None = None,
        prepared_statements: bool = True,
        bm25: Mapping[str, float | None] | None = None,
        cache: Path | None = None,
    ) -> None:
        """``bm25``: the configured BM25 parameters (as ``SQLiteStore``'s); ``cache``: a
        local file for the mirror (``_mirror_cache``), checked against the database on load."""
        super().__init__(
            url,
            migrate=migrate,
            pool_size=pool_size,
            pool_timeout=pool_timeout,
            prepared_statements=prepared_statements,
        )
        self.hnsw = hnsw or HnswSettings()
        legacy = self.setting("bm25") is None and self.version > 0
        self.bm25 = resolve_bm25(self.setting_default, bm25, "in this database", legacy=legacy)
        self._cache: MirrorCache | None = None
        if cache is not None:
            # The database's identity (set once by whichever server came first; a
            # standby reads the primary's) stamps the file, as the embedded store's.
            identity = self.setting_default("dense.identity", secrets.token_hex(16))
            stamp = cache_stamp(identity, self.bm25.title_weight, self.bm25.body_weight)
            self._cache = MirrorCache(cache, stamp, vectors=False)
        # §15.6: each tenant's own version numbers (tenant_versions).
        self.tenancy = TenantVersions(self._rows, DIALECT)
        # BM25's read side: committed rows in memory, following the database (_pg_mirror).
        self.index = QueryIndex(
            PostgresSource(self._pool),
            self._cache,
            self.bm25,
            reader=self._reading,
            fallback=self,
            learned_sparse=self,
        )
        self._mirror = self.index.mirror

    def _reading(self, mirror: Mirror, version: int | None) -> SnapshotRead:
        """The version read, resolved in the database (this thread's snapshot, if pinned).

        A mirror behind it follows the database first. A version below the mirror's
        floor may have lost rows to its compaction: SQL answers that one.
        """
        at = self.version if version is None else version
        snapshot = mirror.snapshot
        if snapshot.version < at:
            snapshot = mirror.sync()
        if at < snapshot.floor or snapshot.version < at:
            return SnapshotRead(None, at)
        return SnapshotRead(snapshot, at)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._pool.close()
