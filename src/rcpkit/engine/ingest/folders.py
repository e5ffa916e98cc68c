"""``rcpkit index``: make an index mirror files and folders, committing as it goes.

A run walks the paths, loads and chunks files on a producer thread while the
calling thread embeds chunks of many documents per model call. What is embedded is
committed every few seconds (`commits.BatchWriter`), whole documents per version
(§7.7.1), so an interrupted run keeps its work and the next run, finding those
files unchanged, embeds only the rest. Files whose bytes did not change are not
re-embedded; documents that came from a file under the paths given and whose file
is gone (or no longer yields a document) are deleted in the run's last commit,
unless ``prune`` is off: only a complete run knows what is gone. A short run is one
commit; a run that changes nothing commits nothing, so no version is created and no
pinned snapshot or cursor expires because of it.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest._source import FileSource
from rcpkit.engine.ingest._types import ChunkSpan, Skipped, SourceDocument
from rcpkit.engine.ingest._walk import find_sources
from rcpkit.engine.ingest.commits import COMMIT_SECONDS, BatchWriter, Interrupted
from rcpkit.engine.ingest.indexer import (
    document_batch,
    document_spans,
    embedding_inputs,
    learned_sparse,
)
from rcpkit.engine.ingest.ocr_pool import OcrPool
from rcpkit.engine.ingest.roots import ROOT_SETTING, choose_root, file_of_uri, within
from rcpkit.engine.ingest.run_progress import RunProgress, Tally
from rcpkit.engine.ingest_options import IngestOptions

__all__ = ["FolderRun", "Interrupted", "RunProgress", "index_folders", "reason_kind"]

EMBED_BATCH = 256  # chunks per embedder call, across documents (length-sorted inside)
_QUEUE_DEPTH = 512  # parsed documents the producer may run ahead of the embedder
ORIGIN = "ingest"


@dataclass(slots=True)
class FolderRun:
    """What one run did."""

    root: Path
    previous_root: Path | None = None
    files: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0  # embedded by this run
    seconds: float = 0.0  # from the model loaded to the last chunk embedded
    version: int = 0
    committed: bool = False
    skipped: list[Skipped] = field(default_factory=list)

    def skip_reasons(self) -> list[tuple[str, int]]:
        """Every distinct skip reason with its count, most frequent first."""
        counts = Counter(reason_kind(item.reason) for item in self.skipped)
        return sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))


@dataclass(slots=True)
class _Parsed:
    document: SourceDocument
    spans: list[ChunkSpan]
    inputs: list[str]
    update: bool


def index_folders(
    engine: Engine,
    paths: Sequence[Path],
    *,
    prune: bool = True,
    contextual: bool = True,
    options: IngestOptions | None = None,
    progress: RunProgress | None = None,
    reroot: bool = False,
    follow_links: bool = False,
    ocr_workers: int | None = None,
    commit_seconds: float = COMMIT_SECONDS,
) -> FolderRun:
    """Index ``paths`` (files or folders) into ``engine``; see the module.

    ``reroot`` forgets the recorded source root (the corpus moved): the paths given
    make the new one, and every ingested document this run does not produce is pruned.
    ``ocr_workers`` sizes the OCR process pool (`ocr_pool`; ``None`` = min(cpu, 2),
    0 = OCR inline on the producer thread). ``commit_seconds``: the most embedding an
    interruption may lose (0 commits after every embedder call). A ``KeyboardInterrupt``
    commits what was embedded and comes out as `Interrupted`, saying what was kept.
    """
    resolved = [Path(path).resolve() for path in paths]
    recorded = engine.store.setting(ROOT_SETTING)
    root = choose_root(None if reroot else recorded, resolved)
    run = FolderRun(root=root, previous_root=Path(recorded) if recorded else None)
    # Front matter is checked against the fields this index advertises (§8).
    settings = replace(options or IngestOptions(), field_types=dict(engine.config.filter_fields))
    sources: list[FileSource] = []
    found_all = find_sources(resolved, root=root, options=settings, follow_links=follow_links)
    for found in found_all:
        if isinstance(found, Skipped):
            run.skipped.append(found)
        else:
            sources.append(found)
    run.files = len(sources)
    if progress is not None:
        progress.started(len(sources), sum(source.size for source in sources))
    on_done = getattr(progress, "recognized", None)  # older RunProgress lack it
    if recorded != str(root):  # before any commit: the ids committed are relative to it
        engine.store.set_setting(ROOT_SETTING, str(root))  # a setting, not a version
    writer = BatchWriter(engine, commit_seconds)
    try:
        with OcrPool(sources, ocr_workers, on_done) as pool:
            seen = _embed_all(engine, sources, run, contextual, progress, pool, writer)
    except KeyboardInterrupt as stop:
        writer.commit()  # what was embedded is kept; nothing is pruned by a partial run
        raise Interrupted(writer.kept) from stop
    # Only a complete run knows which files are gone: deletions go in its last commit.
    gone = _gone(engine, [Path(root.anchor)] if reroot else resolved, seen) if prune else []
    run.removed = len(gone)
    writer.commit(gone)
    run.committed = writer.kept.version is not None
    run.version = writer.kept.version or engine.store.tenancy.latest(None)
    return run


def _embed_all(
    engine: Engine,
    sources: list[FileSource],
    run: FolderRun,
    contextual: bool,
    progress: RunProgress | None,
    pool: OcrPool,
    writer: BatchWriter,
) -> set[str]:
    """Embed the producer's parsed documents ``EMBED_BATCH`` chunks at a time; their ids.

    The writer commits between embedder calls when its time is due; the last
    documents embedded stay pending for the run's last commit.
    """
    embedder = engine.embedder()
    started = time.perf_counter()
    seen: set[str] = set()
    pending: list[_Parsed] = []
    tally = Tally(progress)
    for item in _produce(engine, sources, embedder.count_tokens, contextual, pool):
        if isinstance(item, Skipped):
            run.skipped.append(item)
        elif isinstance(item, str):
            seen.add(item)
            run.unchanged += 1
        elif isinstance(item, FileSource):
            tally.file(item)
        else:
            pending.append(item)
            seen.add(item.document.id)
            tally.document(len(item.spans))
        if _chunk_count(pending) >= EMBED_BATCH:
            tally.embedding(pending[-1].document.id)  # name it, then embed it
            _flush(engine, embedder, pending, writer, run, contextual)
            writer.commit_if_due()
            tally.embedded(run.chunks)
    _flush(engine, embedder, pending, writer, run, contextual)
    tally.embedded(run.chunks)
    run.seconds = time.perf_counter() - started
    return seen


def _chunk_count(pending: list[_Parsed]) -> int:
    return sum(len(parsed.inputs) for parsed in pending)


def _flush(
    engine: Engine,
    embedder: Any,
    pending: list[_Parsed],
    writer: BatchWriter,
    run: FolderRun,
    contextual: bool,
) -> None:
    if not pending:
        return
    inputs = [text for parsed in pending for text in parsed.inputs]
    vectors = list(embedder.embed(inputs, "document")) if inputs else []
    sparse = learned_sparse(engine, inputs, None)
    batch = document_batch(
        engine,
        [parsed.document for parsed in pending],
        [parsed.spans for parsed in pending],
        vectors,
        contextual,
        ORIGIN,
        sparse,
    )
    writer.add(batch.documents)
    run.chunks += len(inputs)
    run.updated += sum(1 for parsed in pending if parsed.update)
    run.added += sum(1 for parsed in pending if not parsed.update)
    pending.clear()


def _produce(
    engine: Engine,
    sources: list[FileSource],
    count_tokens: Any,
    contextual: bool,
    pool: OcrPool,
) -> Iterator[_Parsed | Skipped | str | FileSource]:
    """Load and chunk on a thread, yielding documents in order (unchanged ones as their id),
    and each file's `FileSource` once it is read to its end."""
    out: queue.Queue[object] = queue.Queue(_QUEUE_DEPTH)
    finished = object()
    stop = threading.Event()

    def work() -> None:
        try:
            seen: set[str] = set()
            # Unchanged means the same bytes *from the same file*: a moved corpus rewrites
            # its documents, so their citations name where the files are now.
            uris = {doc_id: uri for doc_id, uri, _ in engine.store.live_documents()}
            for source in sources:
                loaded = pool.load(source)
                for item in _parse(engine, loaded, source, count_tokens, contextual, (seen, uris)):
                    if stop.is_set():
                        return
                    out.put(item)
                out.put(source)  # the file's end
        except BaseException as error:  # re-raised on the consuming thread
            out.put(error)
        finally:
            out.put(finished)

    thread = threading.Thread(target=work, name="ingest-parse", daemon=True)
    thread.start()
    try:
        while (item := out.get()) is not finished:
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                out.get(timeout=0.05)
        thread.join()


def _parse(
    engine: Engine,
    loaded: Iterator[SourceDocument | Skipped],
    source: FileSource,
    count_tokens: Any,
    contextual: bool,
    known: tuple[set[str], dict[str, str | None]],
) -> Iterator[_Parsed | Skipped | str]:
    seen, uris = known
    for item in loaded:
        if isinstance(item, Skipped):
            yield item
            continue
        if item.id in seen:
            yield Skipped(source.path, f"duplicate document id {item.id!r}")
            continue
        seen.add(item.id)
        stored = engine.store.content_hash(item.id)
        if stored == item.content_hash and uris.get(item.id) == item.uri:
            yield item.id
            continue
        spans = document_spans(engine, item, count_tokens)
        yield _Parsed(item, spans, embedding_inputs(item, spans, contextual), stored is not None)


def _gone(engine: Engine, paths: Sequence[Path], seen: set[str]) -> list[str]:
    """Ingested documents from a file under ``paths`` that this run did not produce."""
    gone = []
    for doc_id, uri, origin in engine.store.live_documents():
        if origin != ORIGIN or doc_id in seen:
            continue
        file = file_of_uri(uri)
        if file is not None and any(within(file, path) for path in paths):
            gone.append(doc_id)
    return gone


def reason_kind(reason: str) -> str:
    """A skip reason without its per-file detail, so equal causes are counted together."""
    if reason.startswith("line ") and ": " in reason:
        return "bad row: " + reason.split(": ", 1)[1]
    if reason.startswith("duplicate document id"):
        return "duplicate document id"
    return reason.split(" (", 1)[0] if reason.startswith(("too large", "unreadable")) else reason
