"""The ANN graph of a dense index: usearch HNSW, built off the request path and saved.

Building a graph over 300k vectors took 734 s on the first query, in every
process. Now the graph is built (or loaded) on a background thread once the
index is large enough — queries take the exact path until it is ready — and
saved next to the SQLite file with the rows it covers (``<file>.usearch`` and
``<file>.usearch.json``: the store's identity, the dimension, the graph's
parameters, the largest key in it and the graph file's size). On open a saved
graph whose record matches is loaded and the newer rows are added to it; one
that does not match (another store's, torn by a crash, other parameters) is
ignored and rebuilt. The graph is only an accelerator: SQLite stays the
system of record, and every hit is checked against the rows of the version
read (retired and collected keys in the graph are dropped by position).

Recall is a contract, not a constant: a graph answers nothing until it has
been *calibrated* against exact search on the queries this index received
(the dense index keeps the last few) and on a sample of its own vectors
(self excluded). The search expansion ``ef`` is doubled from 64 until the
tie-aware recall@10 of the *worse* of the two query sets reaches the target
(default 0.95); the graph is used only if that ``ef`` answers faster than the
exact path timed on the same queries in the same rounds. Otherwise the
decision "exact" is kept — the graph is dropped from memory and, on open, not
loaded again until the index grew by half. On the synthetic hashing vectors
(BENCHMARKS.md, issue 15) the needed ``ef`` costs more than the exact
product, so the calibration picks exact there; on clustered model embeddings
it picks the graph. The result is saved in the sidecar with the graph.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.index._usearch import import_usearch_index

__all__ = ["AnnGraph", "Calibration", "GraphSettings", "calibrate"]

_log = logging.getLogger(__name__)
Rows = Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]
_RESAVE_GROWTH = 0.1  # save again once the graph grew by this share since the last save
_RECALIBRATE_GROWTH = 0.5  # calibrate again once the index grew by this share
_EF_LADDER = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
_K = 10


@dataclass(frozen=True, slots=True)
class GraphSettings:
    connectivity: int = 32
    expansion_add: int = 128
    target_recall: float = 0.95  # recall@10 the calibrated ef must reach
    max_cost: float = 1.0  # ANN p50 must be below this share of the exact p50


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a calibration measured and chose: ``ef`` (0: exact search) for ``rows`` rows."""

    ef: int
    rows: int
    recall: float  # of the chosen ef (or the best reached), worse query set
    ann_ms: float  # p50 at that ef
    exact_ms: float  # p50 of the exact path, same queries, same rounds
    curve: tuple[tuple[int, float, float], ...]  # (ef, recall, p50 ms) per step tried

    @property
    def use_ann(self) -> bool:
        return self.ef > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ef": self.ef,
            "rows": self.rows,
            "recall": self.recall,
            "ann_ms": self.ann_ms,
            "exact_ms": self.exact_ms,
            "curve": [list(step) for step in self.curve],
        }

    @classmethod
    def from_json(cls, record: Any) -> Calibration | None:
        try:
            curve = tuple((int(e), float(r), float(t)) for e, r, t in record["curve"])
            return cls(
                int(record["ef"]),
                int(record["rows"]),
                float(record["recall"]),
                float(record["ann_ms"]),
                float(record["exact_ms"]),
                curve,
            )
        except (KeyError, TypeError, ValueError):
            return None


def tie_aware_recall(found: npt.NDArray[np.int64], scores: npt.NDArray[np.float32]) -> float:
    """Share of the exact top-k reached: a hit counts when its exact score reaches the k-th.

    ``found`` are row positions, ``scores`` the exact scores of every row. Hashing
    and other sparse vectors tie often; which of two tied rows comes back is no miss.
    """
    k = min(_K, len(scores))
    if k == 0:
        return 1.0
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    found = found[(found >= 0) & (found < len(scores))][:k]
    return float(np.count_nonzero(scores[found] >= kth - 1e-5)) / k


def calibrate(
    graph: Any,
    keys: npt.NDArray[np.int64],
    matrix: npt.NDArray[np.float32],
    queries: npt.NDArray[np.float32],
    exact: Callable[[npt.NDArray[np.float32]], object],
    settings: GraphSettings,
    seed: int = 0,
) -> Calibration:
    """Choose ef by measurement: the smallest reaching the target recall, if it beats exact.

    Two query sets, each scored against exact search: ``queries`` (vectors the
    index was actually asked) and rows of the index itself, with the row's own
    key removed from both the truth and the answer (it would be a free hit).
    The binding recall is the worse set's, so neither easy document-to-document
    neighbours nor a few odd queries decide alone. ``exact`` is the index's own
    exact search, timed on the same queries in the same rounds as the graph.
    """
    rng = np.random.default_rng(seed)
    own = rng.choice(len(keys), size=min(len(keys), max(len(queries), 16)), replace=False)
    sets = [(np.asarray(queries, np.float32), None), (matrix[own], own)]
    truths = [[(matrix @ q).astype(np.float32) for q in vectors] for vectors, _ in sets]
    for (_, rows), truth in zip(sets, truths, strict=True):
        if rows is not None:
            for scores, row in zip(truth, rows, strict=True):
                scores[row] = -np.inf  # self excluded from the truth
    exact_ms = []
    curve: list[tuple[int, float, float]] = []
    for ef in _EF_LADDER:
        graph.expansion_search = ef
        recalls: list[float] = []
        times: list[float] = []
        for (vectors, rows), truth in zip(sets, truths, strict=True):
            got: list[float] = []
            for i, query in enumerate(vectors):
                started = time.perf_counter()
                matches = graph.search(query, _K + 1, threads=1)
                times.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                exact(query)
                exact_ms.append((time.perf_counter() - started) * 1000)
                found = np.searchsorted(keys, np.asarray(matches.keys, dtype=np.int64))
                if rows is not None:
                    found = found[found != rows[i]]
                got.append(tie_aware_recall(found, truth[i]))
            if got:
                recalls.append(float(np.mean(got)))
        recall, ann_ms = min(recalls), float(np.median(times))
        curve.append((ef, recall, ann_ms))
        exact_p50 = float(np.median(exact_ms))
        if ann_ms >= settings.max_cost * exact_p50:
            break  # slower than exact already: a larger ef only costs more
        if recall >= settings.target_recall:
            return Calibration(ef, len(keys), recall, ann_ms, exact_p50, tuple(curve))
    ef, recall, ann_ms = max(curve, key=lambda step: step[1])
    return Calibration(0, len(keys), recall, ann_ms, float(np.median(exact_ms)), tuple(curve))


class AnnGraph:
    """One usearch index over (key, vector) rows; ``rows()`` gives the rows held so far."""

    def __init__(
        self,
        dimension: int,
        settings: GraphSettings,
        path: Path | None,
        identity: str,
        lock: threading.Lock,
    ) -> None:
        self.dimension = dimension
        self.settings = settings
        self.path = path
        self.identity = identity
        self._lock = lock  # the dense index's writer lock: adds and publishing are serialised
        self.built: Any = None  # usearch.index.Index once built or loaded
        self.calibration: Calibration | None = None
        self._largest = 0  # the largest key in the graph
        self._saved = 0  # rows in the graph at the last save
        self._builder: threading.Thread | None = None
        self._calibrator: threading.Thread | None = None
        self.loaded = False  # the graph came from the saved file (not rebuilt)

    @property
    def ready(self) -> Any:
        """The graph to search (its ``expansion_search`` calibrated), or None: search exactly."""
        calibration = self.calibration
        if calibration is None or not calibration.use_ann:
            return None
        return self.built

    def start(self, rows: Rows) -> None:
        """Build or load the graph on a background thread (once per calibration decision)."""
        if self._builder is not None and self._builder.is_alive():
            return
        if self.built is not None:
            return
        calibration = self.calibration or self._saved_exact_decision()
        if calibration is not None and not calibration.use_ann:
            self.calibration = calibration  # exact won: no graph until the index grew enough
            if len(rows()[0]) < calibration.rows * (1 + _RECALIBRATE_GROWTH):
                return
        self._builder = threading.Thread(
            target=self._build, args=(rows,), name="rcpkit-ann", daemon=True
        )
        self._builder.start()

    def wait(self, timeout: float) -> bool:
        """Wait for a started build and calibration (benchmarks, tests); True if ANN answers."""
        deadline = time.monotonic() + timeout
        for thread in (self._builder, self._calibrator):
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
        return self.ready is not None

    def wait_built(self, timeout: float) -> bool:
        """Wait for a started build only; True once a graph is held (calibrated or not)."""
        if self._builder is not None:
            self._builder.join(timeout)
        return self.built is not None

    def calibrate_soon(
        self,
        rows: Rows,
        queries: npt.NDArray[np.float32],
        exact: Callable[[npt.NDArray[np.float32]], object],
    ) -> None:
        """Calibrate on a background thread when a built graph has no current decision."""
        graph, calibration = self.built, self.calibration
        if graph is None or (self._calibrator is not None and self._calibrator.is_alive()):
            return
        if calibration is not None and len(graph) < calibration.rows * (1 + _RECALIBRATE_GROWTH):
            return
        self._calibrator = threading.Thread(
            target=self._calibrate,
            args=(rows, queries, exact),
            name="rcpkit-ann-calibrate",
            daemon=True,
        )
        self._calibrator.start()

    def _calibrate(
        self,
        rows: Rows,
        queries: npt.NDArray[np.float32],
        exact: Callable[[npt.NDArray[np.float32]], object],
    ) -> None:
        try:
            graph = self.built
            keys, matrix = rows()
            held = keys <= self._largest  # the rows the graph holds
            found = calibrate(graph, keys[held], matrix[held], queries, exact, self.settings)
            graph.expansion_search = max(found.ef, 1)
            with self._lock:
                self.calibration = found
                self._save()
                if not found.use_ann:
                    self.built = None  # exact won: the memory goes back
            _log.info(
                "ANN calibration over %d rows: ef %d, recall@10 %.3f, %.2f ms vs exact %.2f ms",
                found.rows,
                found.ef,
                found.recall,
                found.ann_ms,
                found.exact_ms,
            )
        except Exception:
            _log.exception("calibrating the ANN graph failed; dense search stays exact")

    def _build(self, rows: Rows) -> None:
        try:
            graph, largest = self._load()
            if graph is None:
                graph, largest = self._new(), 0
            keys, matrix = rows()
            newer = keys > largest
            if newer.any():  # the bulk, without the writer lock
                graph.add(keys[newer], matrix[newer], threads=0)
                largest = int(keys[newer].max())
            with self._lock:  # rows the writer appended meanwhile, then publish
                keys, matrix = rows()
                newer = keys > largest
                if newer.any():
                    graph.add(keys[newer], matrix[newer], threads=0)
                    largest = int(keys[newer].max())
                calibration = self.calibration
                if calibration is not None and calibration.use_ann:
                    graph.expansion_search = calibration.ef
                self.built, self._largest = graph, largest
                if not self.loaded or len(graph) > self._saved * (1 + _RESAVE_GROWTH):
                    self._save()
        except Exception:  # the exact path keeps answering
            _log.exception("building the ANN graph failed; dense search stays exact")

    def _new(self) -> Any:
        return import_usearch_index().Index(
            ndim=self.dimension,
            metric="ip",  # unit vectors: inner product is the cosine
            dtype="f32",
            connectivity=self.settings.connectivity,
            expansion_add=self.settings.expansion_add,
        )

    def add(self, keys: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        """New rows (called under the writer lock)."""
        graph = self.built
        if graph is None or not len(keys):
            return
        newer = keys > self._largest
        if newer.any():
            graph.add(keys[newer], matrix[newer], threads=0)
            self._largest = int(keys[newer].max())
        if len(graph) > self._saved * (1 + _RESAVE_GROWTH):
            self._save()

    # --- persistence ---

    def _record(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "dimension": self.dimension,
            "connectivity": self.settings.connectivity,
            "expansion_add": self.settings.expansion_add,
            "target_recall": self.settings.target_recall,
        }

    def _sidecar(self) -> Path | None:
        return None if self.path is None else self.path.with_name(self.path.name + ".json")

    def _save(self) -> None:
        """Save the graph (when held) and the record of it and its calibration."""
        graph, sidecar = self.built, self._sidecar()
        if self.path is None or sidecar is None:
            return
        calibration = self.calibration.to_json() if self.calibration else None
        try:
            record = {**self._record(), "calibration": calibration}
            if graph is not None:
                temporary = self.path.with_name(self.path.name + ".tmp")
                graph.save(str(temporary))
                record |= {"largest_key": self._largest, "rows": len(graph)}
                record["bytes"] = temporary.stat().st_size
                record["crc32"] = _crc32(temporary)
            else:  # the saved graph (if any) is kept only if the record still describes it
                previous = self._read_sidecar() or {}
                kept = ("largest_key", "rows", "bytes", "crc32")
                record |= {key: previous[key] for key in kept if key in previous}
            sidecar_tmp = sidecar.with_name(sidecar.name + ".tmp")
            sidecar_tmp.write_text(json.dumps(record))
            if graph is not None:  # a crash between these leaves a mismatch: rebuilt
                os.replace(temporary, self.path)
                self._saved = len(graph)
            os.replace(sidecar_tmp, sidecar)
        except OSError:
            _log.warning("could not save the ANN graph to %s", self.path, exc_info=True)

    def _read_sidecar(self) -> dict[str, Any] | None:
        sidecar = self._sidecar()
        if sidecar is None:
            return None
        try:
            record = json.loads(sidecar.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict):
            return None
        if any(record.get(key) != value for key, value in self._record().items()):
            return None  # another store's, other parameters or another target
        return record

    def _saved_exact_decision(self) -> Calibration | None:
        record = self._read_sidecar()
        if record is None or record.get("calibration") is None:
            return None
        calibration = Calibration.from_json(record["calibration"])
        return calibration if calibration is not None and not calibration.use_ann else None

    def _load(self) -> tuple[Any, int]:
        record = self._read_sidecar()
        if self.path is None or record is None:
            return None, 0
        try:
            if record.get("bytes") != self.path.stat().st_size:
                return None, 0
            # usearch reads offsets from the file as they are: a damaged graph of the
            # right size crashed the process in native code (SIGSEGV; issue 34, cache
            # campaign). Only a file whose checksum is the one saved is handed to it.
            if record.get("crc32") != _crc32(self.path):
                _log.warning("ignoring the ANN graph %s (checksum); rebuilding it", self.path)
                return None, 0
        except OSError:
            return None, 0
        graph = self._new()
        try:
            graph.load(str(self.path))
        except Exception:
            return None, 0
        if len(graph) != record.get("rows"):
            return None, 0
        if record.get("calibration") is not None and self.calibration is None:
            self.calibration = Calibration.from_json(record["calibration"])
        self._saved = len(graph)
        self.loaded = True
        return graph, int(record["largest_key"])


def _crc32(path: Path) -> int:
    """The CRC-32 of a file, read in blocks."""
    crc = 0
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc
