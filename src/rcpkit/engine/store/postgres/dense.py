"""Dense recall inside PostgreSQL: pgvector HNSW, with an exact path for small candidate sets.

Vectors are unit length, so cosine distance ``<=>`` ranks as the embedded
store's dot product does and ``score = 1 - distance`` is the cosine (§6.1).

A filter (§8), a pinned version (§7.7.1) and the tenant (§15.6) are plain
``WHERE`` terms. When they leave few candidates (``exact_max`` or fewer) those
are scored exactly, without the index, so a filter never costs recall. Larger
sets go through HNSW with pgvector's iterative index scan (``relaxed_order``,
pgvector >= 0.8), which keeps walking the graph until ``k`` rows pass the
``WHERE``; should it still come back short, the exact path answers.

A bulk load defers the index (:func:`defer_vector_index`, ``rcpkit db
defer-index``): HNSW upkeep row by row dominates indexing, and one build over
the loaded rows is far cheaper. Until :func:`rebuild_vector_index` (``rcpkit db
reindex``) every process leaves the index absent and dense recall scans
exactly: slower, never less recall.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import Filter, compile_postgres
from rcpkit.engine.store.base import CommitResult
from rcpkit.engine.store.postgres.errors import unavailable
from rcpkit.engine.store.postgres.lexical import named

__all__ = [
    "HnswSettings",
    "PostgresDenseSearch",
    "defer_vector_index",
    "ensure_vector_index",
    "rebuild_vector_index",
    "vector_literal",
    "vectors_read",
]

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class HnswSettings:
    m: int = 16
    ef_construction: int = 64
    ef_search: int = 100  # raised to k for larger k
    exact_max: int = 20_000  # candidate sets up to this size are scored exactly
    # maintenance_work_mem of a build (issue 20). pgvector builds fast while the graph
    # fits in it and slows several-fold once it spills: at PostgreSQL's 64 MB default
    # 50,000 vectors of 384 dimensions took 107 s, at 1 GB 19 s.
    build_memory_mb: int = 1024

    def __post_init__(self) -> None:
        # pgvector's own bounds, checked before any SQL is built from them.
        if not 2 <= self.m <= 100:
            raise ValueError(f"hnsw_m must be within 2..100, not {self.m}")
        if not max(4, 2 * self.m) <= self.ef_construction <= 1000:
            raise ValueError(
                f"hnsw_ef_construction must be within {max(4, 2 * self.m)}..1000 (at least"
                f" 2 × hnsw_m), not {self.ef_construction}"
            )
        if not 1 <= self.ef_search <= 1000:
            raise ValueError(f"hnsw_ef_search must be within 1..1000, not {self.ef_search}")
        if not 1 <= self.build_memory_mb <= 2_097_151:  # PostgreSQL's bound, in MB
            raise ValueError(
                f"hnsw_build_memory_mb must be within 1..2097151, not {self.build_memory_mb}"
            )

    def options(self) -> list[str]:
        """The index's ``WITH`` options as ``pg_class.reloptions`` lists them."""
        return [f"m={int(self.m)}", f"ef_construction={int(self.ef_construction)}"]


def vector_literal(vector: Matrix) -> str:
    """pgvector's text form; ``repr`` of each float32 (as a double) reads back exactly."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


# pgvector's binary form (``vector_send``): dimension and a reserved word (int16 each),
# then the floats, all big-endian. Parsed with numpy, not as the text of a real[] array.
VECTOR_BYTES = "vector_send(embedding)"


def vectors_read(blobs: Sequence[bytes]) -> Matrix:
    """The float32 rows of ``vector_send`` values (all of one dimension)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    flat = np.frombuffer(b"".join(bytes(blob)[4:] for blob in blobs), dtype=">f4")
    return flat.reshape(len(blobs), -1).astype(np.float32)


def ensure_vector_index(connection: Any, dimension: int, settings: HnswSettings) -> None:
    """Type the embedding column ``vector(dimension)`` and build its HNSW index, once.

    While a bulk load deferred the index, only the column is typed.
    """
    (typmod,) = connection.execute(
        "SELECT atttypmod FROM pg_attribute"
        " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
    ).fetchone()
    if typmod == dimension and (_has_index(connection) or _deferred(connection)):
        return
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK,))
        (typmod,) = connection.execute(
            "SELECT atttypmod FROM pg_attribute"
            " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
        ).fetchone()
        if typmod != dimension:
            connection.execute(
                f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({int(dimension)})"
            )
        if not _deferred(connection):
            _build_memory(connection, settings, local=True)
            connection.execute(f"CREATE INDEX IF NOT EXISTS {_create_index(settings)}")


_INDEX_LOCK = 0x72637032
_DEFERRED = "dense.index_deferred"  # a settings row: present while a bulk load runs


def _create_index(settings: HnswSettings) -> str:
    return (
        "chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops)"
        f" WITH (m = {int(settings.m)}, ef_construction = {int(settings.ef_construction)})"
    )


def _build_memory(connection: Any, settings: HnswSettings, *, local: bool) -> None:
    """``maintenance_work_mem`` for an index build: this transaction's, or the session's."""
    connection.execute(
        "SELECT set_config('maintenance_work_mem', %s, %s)",
        (f"{int(settings.build_memory_mb)}MB", local),
    )


def _has_index(connection: Any) -> bool:
    row = connection.execute("SELECT to_regclass('chunks_embedding') IS NOT NULL").fetchone()
    return bool(row[0])


def _deferred(connection: Any) -> bool:
    row = connection.execute("SELECT 1 FROM settings WHERE name = %s", (_DEFERRED,)).fetchone()
    return row is not None


def defer_vector_index(connection: Any) -> bool:
    """Drop the HNSW index until :func:`rebuild_vector_index`; whether one was dropped."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_INDEX_LOCK,))
        connection.execute(
            "INSERT INTO settings (name, value) VALUES (%s, '1') ON CONFLICT (name) DO NOTHING",
            (_DEFERRED,),
        )
        existed = _has_index(connection)
        connection.execute("DROP INDEX IF EXISTS chunks_embedding")
    return existed


def rebuild_vector_index(connection: Any, settings: HnswSettings | None = None) -> str:
    """(Re)build the HNSW index without blocking writes; returns what was done.

    ``connection`` must be in autocommit (``CONCURRENTLY`` runs outside a
    transaction). An index a failed concurrent build left invalid is dropped and
    built again, as PostgreSQL recommends. Servers and writers keep working
    meanwhile; the deferral ends only once the index is valid.
    """
    settings = settings or HnswSettings()
    (typmod,) = connection.execute(
        "SELECT atttypmod FROM pg_attribute"
        " WHERE attrelid = 'chunks'::regclass AND attname = 'embedding'"
    ).fetchone()
    if typmod <= 0:
        raise ValueError("the store holds no vectors yet: index documents first")
    started = time.monotonic()
    (valid,) = connection.execute(
        "SELECT coalesce(bool_and(i.indisvalid), true) FROM pg_index AS i"
        " WHERE i.indexrelid = to_regclass('chunks_embedding')"
    ).fetchone()
    (options,) = connection.execute(
        "SELECT reloptions FROM pg_class WHERE oid = to_regclass('chunks_embedding')"
    ).fetchone() or (None,)
    _build_memory(connection, settings, local=False)
    try:
        if _has_index(connection) and valid and sorted(options or []) == sorted(settings.options()):
            connection.execute("REINDEX INDEX CONCURRENTLY chunks_embedding")
            done = "rebuilt"
        else:
            connection.execute("DROP INDEX CONCURRENTLY IF EXISTS chunks_embedding")
            connection.execute(f"CREATE INDEX CONCURRENTLY {_create_index(settings)}")
            done = "built"
    finally:
        connection.execute("RESET maintenance_work_mem")
    connection.execute("DELETE FROM settings WHERE name = %s", (_DEFERRED,))
    seconds = time.monotonic() - started
    return (
        f"{done} the HNSW index chunks_embedding (m = {settings.m}, ef_construction ="
        f" {settings.ef_construction}) in {seconds:.1f} s"
    )


class _Connections(Protocol):
    """What the dense search needs of ``PostgresStore``: its connections and totals."""

    def connection(self) -> AbstractContextManager[Any]: ...

    def reading(self) -> AbstractContextManager[Any]: ...

    def live_chunks(self) -> int: ...

    def count(self, tenant: str | None = None) -> tuple[int, int]: ...


class PostgresDenseSearch:
    """:class:`DenseSearch` as SQL: every process sees every other's writes at once."""

    def __init__(self, store: _Connections, settings: HnswSettings | None = None) -> None:
        self._store = store
        self.settings = settings or HnswSettings()

    @unavailable()
    def search(
        self,
        query: Matrix,
        k: int,
        filter: Filter | None = None,
        version: int | None = None,
        tenant: str | None = None,
    ) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        where, params = _visible(filter, version, tenant)
        params.update(query=vector_literal(query), k=k, cap=self.settings.exact_max + 1)
        # §13.1: bounded by the request's deadline (see PostgresStore.reading).
        with self._store.reading() as connection, connection.transaction():
            (count,) = connection.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM chunks WHERE {where} LIMIT %(cap)s) AS c",
                params,
            ).fetchone()
            rows = None
            if count > self.settings.exact_max:
                rows = self._approximate(connection, where, params, k, min(k, count))
            if rows is None:
                rows = connection.execute(
                    "SELECT key, 1 - (embedding <=> %(query)s::vector) AS score"
                    f" FROM (SELECT key, embedding FROM chunks WHERE {where} OFFSET 0) AS c"
                    " ORDER BY score DESC, key LIMIT %(k)s",
                    params,
                ).fetchall()
        ranked = [(int(key), float(score)) for key, score in rows]
        ranked.sort(key=lambda pair: (-pair[1], pair[0]))  # deterministic ties (§7.7.1)
        return ranked

    def _approximate(
        self, connection: Any, where: str, params: dict[str, object], k: int, want: int
    ) -> list[tuple[int, float]] | None:
        ef_search = max(self.settings.ef_search, k)
        connection.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef_search),))
        connection.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        rows: list[tuple[int, float]] = connection.execute(
            "SELECT key, 1 - (embedding <=> %(query)s::vector) AS score FROM chunks"
            f" WHERE {where} ORDER BY embedding <=> %(query)s::vector LIMIT %(k)s",
            params,
        ).fetchall()
        return rows if len(rows) >= want else None

    @unavailable()
    def vectors_of(self, keys: Sequence[int]) -> dict[int, Matrix]:
        if not keys:
            return {}
        with self._store.reading() as connection:
            rows = connection.execute(
                f"SELECT key, {VECTOR_BYTES} FROM chunks WHERE key = ANY(%s)", (list(keys),)
            ).fetchall()
        matrix = vectors_read([row[1] for row in rows])
        return {int(row[0]): matrix[i] for i, row in enumerate(rows)}

    def apply(self, result: CommitResult, tenant: str | None) -> None:
        """Nothing to do: the vectors were written with the commit, in the database."""

    def drop(self, keys: Sequence[int]) -> None:
        """Nothing to do: garbage collection deleted the rows."""

    def live_count(self, tenant: str | None = None) -> int:
        return self._store.count(tenant)[1]

    @unavailable()
    def sample(self, limit: int, tenant: str | None = None) -> Matrix:
        """Up to ``limit`` of ``tenant``'s live vectors (§15.6: calibration is per tenant)."""
        with self._store.connection() as connection:
            rows = connection.execute(
                f"SELECT {VECTOR_BYTES} FROM chunks WHERE removed IS NULL AND tenant = %s"
                " ORDER BY md5(key::text) LIMIT %s",
                (tenant or "", limit),
            ).fetchall()
        return vectors_read([row[0] for row in rows])


def _visible(
    filter: Filter | None, version: int | None, tenant: str | None
) -> tuple[str, dict[str, object]]:
    """The ``WHERE`` of chunks ``tenant`` may see at ``version`` passing ``filter``."""
    params: dict[str, object] = {"tenant": tenant or ""}
    if version is None:
        where = "tenant = %(tenant)s AND removed IS NULL"
    else:
        where = (
            "tenant = %(tenant)s AND added <= %(version)s"
            " AND (removed IS NULL OR removed > %(version)s)"
        )
        params["version"] = version
    if filter is not None:
        sql, positional = compile_postgres(filter, "filter_meta")
        fragment, values = named(sql, positional, "f")
        where += " AND " + fragment
        params.update(values)
    return where, params
