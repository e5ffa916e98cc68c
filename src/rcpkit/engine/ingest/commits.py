"""When a folder run commits: every few seconds of embedding, so an interruption keeps it.

A run used to commit once at its end, and an index stopped after minutes of
embedding kept nothing (issue 51). `BatchWriter` commits the documents embedded so
far whenever ``seconds`` have passed since its last commit. Each commit holds
whole documents — a document's chunks land in one version, so a reader never sees
half of one (§7.7.1) — and a re-run finds them unchanged and embeds only the rest.
Deletions (pruning) are left to the run's last commit: only a complete run knows
which files are gone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest.indexer import commit_batch
from rcpkit.engine.store.base import NewChunk, WriteBatch

__all__ = ["COMMIT_SECONDS", "BatchWriter", "Interrupted", "Kept"]

COMMIT_SECONDS = 10.0  # at most this much embedding is lost to a kill -9


class Kept:
    """What a run has committed so far: its documents, chunks and last version."""

    __slots__ = ("chunks", "documents", "version")

    def __init__(self) -> None:
        self.documents = 0
        self.chunks = 0
        self.version: int | None = None  # None: nothing committed by this run


class BatchWriter:
    """Collects embedded documents and commits them every ``seconds``."""

    def __init__(self, engine: Engine, seconds: float = COMMIT_SECONDS) -> None:
        self._engine = engine
        self._seconds = seconds
        self._pending: list[tuple[Any, list[NewChunk]]] = []
        self._last = time.monotonic()
        self.kept = Kept()
        self.written: set[str] = set()  # ids committed by this run

    def add(self, documents: Sequence[tuple[Any, list[NewChunk]]]) -> None:
        """Documents embedded whole; committed with the next commit."""
        self._pending.extend(documents)

    def commit_if_due(self) -> None:
        if time.monotonic() - self._last >= self._seconds:
            self.commit()

    def commit(self, delete: Sequence[str] = ()) -> None:
        """Commit what is pending (and ``delete``) as one version, if it changes anything."""
        batch = WriteBatch(documents=list(self._pending), delete=list(delete))
        result = commit_batch(self._engine, batch)
        # Cleared only once committed: an interrupted commit rolled back and is retried.
        self._pending.clear()
        self._last = time.monotonic()
        if result is None:
            return
        self.written.update(row.doc_id for row, _ in batch.documents)
        self.kept.documents += len(batch.documents)
        self.kept.chunks += sum(len(chunks) for _, chunks in batch.documents)
        self.kept.version = result.shown


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C after committing what it had embedded (``kept``)."""

    def __init__(self, kept: Kept) -> None:
        super().__init__()
        self.kept = kept
