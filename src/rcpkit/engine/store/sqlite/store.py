"""The embedded store: one SQLite file (WAL) is the system of record.

Why stdlib ``sqlite3`` and not ``apsw``: FTS5 and JSON1 are compiled into the
stock module here, so no loadable extension is needed. FTS5 keeps the analysed
title and body of every chunk (its content table); queries do not run through
it: every read but SPLADE's goes to the process's in-memory mirror of this
file (``_mirror``: BM25 postings with a pruning top-k, filter columns, the
vector matrix), kept current with every version any process commits, and
saved beside the file (``index.mirror``, ``_mirror_cache``: all but the
vectors, which this file holds) so that a new process maps it back and reads
only the vectors and the newer rows instead of rebuilding.

Every write is one ``BEGIN IMMEDIATE`` transaction: a crash mid-batch leaves
the previous version intact, and a committed version survives a process crash
(``synchronous=FULL``). Versions are allocated inside that transaction from the
file, so several processes can write one index and never reuse a version.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from rcpkit.engine.index import QueryIndex
from rcpkit.engine.index._mirror_cache import MirrorCache, cache_stamp
from rcpkit.engine.index.dense import DensePolicy, LocalDenseSearch
from rcpkit.engine.scoring.bm25 import resolve_bm25
from rcpkit.engine.store.sqlite.checks import check_index_file
from rcpkit.engine.store.sqlite.file import DIALECT, stored_version
from rcpkit.engine.store.sqlite.reads import Reads
from rcpkit.engine.store.sqlite.schema import SCHEMA, SCHEMA_VERSION
from rcpkit.engine.store.sqlite.source import SQLiteSource
from rcpkit.engine.store.sqlite.writes import Writes
from rcpkit.engine.store.tenant_versions import SCHEMA as TENANT_SCHEMA
from rcpkit.engine.store.tenant_versions import TenantVersions, backfill

__all__ = ["SQLiteStore"]


class SQLiteStore(Writes, Reads):
    """A store in one SQLite file; thread-safe (one writer, a connection per reader thread).

    Its file and connections are ``file``'s, its commits ``writes``', its reads
    ``reads``'; this class opens the file, its layout and the query index.
    """

    def __init__(
        self,
        path: Path | str,
        cache: bool = True,
        *,
        bm25: Mapping[str, float | None] | None = None,
        create: bool = True,
        shared_vectors: Path | None = None,
    ) -> None:
        """``cache``: keep the mirror in ``<file>.mirror`` beside the file (not ``:memory:``).

        ``bm25``: the configured BM25 parameters (`scoring.bm25.BM25` fields; None or an
        absent key: the index's own, or the defaults for a new index). ``create``: a
        missing or empty file becomes a new index; else it is an error (``NotAnIndex``).
        A file that holds anything but an rcpkit index is refused either way, before
        anything is written to it or to its mirror (``checks``). ``shared_vectors``: a
        folder in RAM where the processes serving this file share its vector matrix
        (``serve --workers N``; ``index/_shared_vectors.py``).
        """
        self.path = Path(path)
        if str(path) != ":memory:":
            check_index_file(self.path, create=create)
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._writer = self._connect()
        self._check_schema()
        self._create_schema()
        # §15.6: each tenant's own version numbers (tenant_versions).
        self.tenancy = TenantVersions(
            lambda sql, params: self._reader.execute(sql, params).fetchall(), DIALECT
        )
        if (
            self.setting("version") is not None
            and not self._writer.execute("SELECT 1 FROM tenant_versions LIMIT 1").fetchone()
        ):
            with self._transaction() as connection:
                backfill(DIALECT, connection, stored_version(connection))
        legacy = self.setting("bm25") is None and self.setting("version") is not None
        self.bm25 = resolve_bm25(self.setting_default, bm25, self.path, legacy=legacy)
        self._cache: MirrorCache | None = None
        if cache and str(path) != ":memory:":
            stamp = cache_stamp(self._identity(), self.bm25.title_weight, self.bm25.body_weight)
            cache_path = self.path.with_suffix(".mirror")
            self._cache = MirrorCache(cache_path, stamp, shared=shared_vectors)
        # What queries read: postings, filter columns, vectors; follows the file.
        self.index = QueryIndex(
            SQLiteSource(lambda: self._reader),
            self._cache,
            self.bm25,
            reader=self._reading,
            learned_sparse=self,
        )
        self._mirror = self.index.mirror

    def _identity(self) -> str:
        return self.setting_default("dense.identity", secrets.token_hex(16))

    def _create_schema(self) -> None:
        """The tables this layout adds; in one transaction when the file lacks any, so
        that a process creating the index beside this one (`serve --create --workers N`)
        sees no table or all of them and the layout's number, never a few (``checks``
        refuses a few, ``_check_schema`` tables without the number)."""
        script = f"{SCHEMA}{TENANT_SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};"
        names = {name for (name,) in self._writer.execute("SELECT name FROM sqlite_master")}
        if not {"settings", "documents", "chunks", "tenant_versions"} <= names:
            script = f"BEGIN IMMEDIATE; {script} COMMIT;"
        self._writer.executescript(script)

    def _check_schema(self) -> None:
        (version,) = self._writer.execute("PRAGMA user_version").fetchone()
        tables = self._writer.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if tables and version in (3, 4):
            with self._transaction() as connection:
                if version == 3:
                    # Layout 4 dates idempotency keys. Keys of unknown age count from now:
                    # each keeps a full retention, so a retry in flight is still safe.
                    connection.execute(
                        "ALTER TABLE idempotency ADD COLUMN created REAL NOT NULL DEFAULT 0"
                    )
                    connection.execute("UPDATE idempotency SET created = ?", (time.time(),))
                # Layout 5 only writes new rows differently; a 4's rows read as they are.
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            return
        if tables and version != SCHEMA_VERSION:
            raise ValueError(
                f"{self.path} holds an index of layout {version}, this rcpkit reads layout "
                f"{SCHEMA_VERSION}; re-index into a new folder"
            )

    def open_dense(self, dimension: int, policy: DensePolicy | None = None) -> LocalDenseSearch:
        """The process-local dense index, loaded from this file's vectors and kept current."""
        # The saved ANN graph names the file it belongs to: a re-created index (keys
        # start again at 1) never reads another file's graph.
        graph = None if str(self.path) == ":memory:" else self.path.with_suffix(".usearch")
        return self.index.open_dense(
            dimension, policy, graph, self._identity(), lambda: self.version
        )

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
        self._fold_log()
        self._writer.close()

    def _fold_log(self) -> None:
        """Fold the WAL into the file and truncate it (bytes on disk after close, issue 51).

        SQLite does so when its last connection closes, but the readers' connections
        (one per thread) outlive the store. Never waits: a process still reading the
        file keeps its log, folded by whichever connection closes last.
        """
        self._writer.execute("PRAGMA busy_timeout = 0")
        with contextlib.suppress(sqlite3.Error):
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
