"""OCR off the hot path: image and PDF files loaded in worker processes (issue 19).

``rcpkit index`` parses files on a producer thread while the calling thread embeds
(see ``folders``). OCR costs seconds a page, so the files that may need it (images,
and PDFs, whose scanned pages are OCR'd) are loaded by a bounded pool of worker
processes instead, submitted in walk order a few ahead of the parse loop: the
producer takes each result when it reaches that file, and meanwhile the embedder
works on what came before. Each worker runs onnxruntime on one thread, so
``workers`` processes use ``workers`` cores (default ``min(cpu, 2)``).

Without the ``ocr`` extra no pool starts: those files load in the producer as any
other, and an image is skipped with the reason (`_ocr.OCR_MISSING`).

A worker that dies (a native crash in a decoder or onnxruntime, the kernel's
out-of-memory killer) breaks the whole pool, and every file in flight fails
with it, not knowing which one killed it. So the pool starts again in
isolation, one file in flight at a time, from the file the producer waits
for: a file that kills a worker with nothing else in flight is the culprit
and is skipped with the reason, and the pool goes on as before; the others
are read as usual (after 16 restarts, the files left are skipped). OCR never
falls back to the indexing process, where such a file would end the run.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rcpkit.engine.ingest import _ocr
from rcpkit.engine.ingest._source import FileSource
from rcpkit.engine.ingest._types import Skipped, SourceDocument
from rcpkit.engine.ingest._walk import load_source

__all__ = ["DIED", "OCR_BOUND", "OcrPool", "default_workers"]

OCR_BOUND = frozenset({*_ocr.IMAGE_EXTENSIONS, ".pdf"})
_AHEAD = 2  # files submitted per worker ahead of the one the producer waits for
_RESTARTS = 16  # pools started again after workers died; then the rest is skipped
DIED = "OCR worker died reading this file (out of memory or a crash)"

Loaded = list[SourceDocument | Skipped]
OnDone = Callable[[int, int], None]


def _proxy(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


def _reduce_proxy(proxy: MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    return _proxy, (dict(proxy),)


# A FileSource carries its IngestOptions, whose mappings are read-only proxies;
# pickle cannot send those to a worker (every pooled file failed the run with
# "cannot pickle 'mappingproxy' object"). This teaches only multiprocessing's
# pickler, not pickle at large.
ForkingPickler.register(MappingProxyType, _reduce_proxy)


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 2))


def _start_worker() -> None:
    _ocr.set_threads(1)


def _load(source: FileSource) -> Loaded:
    """What `load_source` yields; a loader's unexpected error is this file's skip.

    Raised in a worker, the error would come back from the future and end the
    whole run; one bad file must cost only itself.
    """
    try:
        return list(load_source(source))
    except Exception as error:
        return [Skipped(source.path, f"OCR failed ({type(error).__name__}: {error})")]


class OcrPool:
    """Loads the OCR-bound ``sources`` in worker processes, in order, ahead of use.

    ``load(source)`` yields what `load_source` would, from the pool for an
    OCR-bound file and inline otherwise; ``on_done(done, total)`` is called as each
    pooled file comes back. Use as a context manager: leaving it stops the workers.
    """

    def __init__(
        self,
        sources: Sequence[FileSource],
        workers: int | None = None,
        on_done: OnDone | None = None,
        loader: Callable[[FileSource], Loaded] = _load,
    ) -> None:
        """``loader``: what a worker runs per file (a module-level function, pickled by name)."""
        count = default_workers() if workers is None else workers
        pooled = [s for s in sources if s.ext in OCR_BOUND] if count > 0 else []
        self._queue = pooled if pooled and _ocr.ocr_available() else []
        self._position = {source.path: n for n, source in enumerate(self._queue)}
        self._next = 0
        self._futures: dict[Path, Future[Loaded]] = {}
        self._done = 0
        self._on_done = on_done
        self._workers = count
        self._window = count * _AHEAD
        self._loader = loader
        self._restarts = 0
        self._executor: ProcessPoolExecutor | None = None
        if self._queue:
            self._start()

    @property
    def total(self) -> int:
        """Files the pool loads (0 when no pool runs)."""
        return len(self._queue)

    def __enter__(self) -> OcrPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def load(self, source: FileSource) -> Iterator[SourceDocument | Skipped]:
        if source.path not in self._position:
            yield from load_source(source)
            return
        items = self._result(source)
        self._done += 1
        if self._on_done is not None:
            self._on_done(self._done, self.total)
        self._fill()
        yield from items

    def _result(self, source: FileSource) -> Loaded:
        while True:
            future = self._futures.pop(source.path, None)
            if future is None:  # the pool gave up after too many deaths
                return [Skipped(source.path, DIED)]
            alone = not self._futures
            try:
                return future.result()
            except BrokenProcessPool:
                pass
            position = self._position[source.path]
            if alone:  # nothing else was in flight: this file killed the worker
                self._restart(position + 1, self._workers * _AHEAD)
                return [Skipped(source.path, DIED)]
            self._restart(position, 1)  # again from this file, one at a time

    def _restart(self, position: int, window: int) -> None:
        """A new pool after a worker died, reading from ``position``, ``window`` ahead."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        self._futures.clear()
        self._restarts += 1
        if self._restarts > _RESTARTS:
            return  # the files left are skipped (`_result`)
        self._next, self._window = position, window
        self._start()

    def _start(self) -> None:
        # spawn, not fork: the parent runs threads (the producer, model loaders).
        self._executor = ProcessPoolExecutor(
            max_workers=self._workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
        )
        self._fill()

    def _fill(self) -> None:
        while (
            self._executor is not None
            and self._next < len(self._queue)
            and len(self._futures) < self._window
        ):
            source = self._queue[self._next]
            self._futures[source.path] = self._executor.submit(self._loader, source)
            self._next += 1
