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
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.store._usearch import import_usearch_index

__all__ = ["AnnGraph", "GraphSettings"]

_log = logging.getLogger(__name__)
Rows = Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]
_RESAVE_GROWTH = 0.1  # save again once the graph grew by this share since the last save


@dataclass(frozen=True, slots=True)
class GraphSettings:
    connectivity: int = 32
    expansion_add: int = 128
    expansion_search: int = 256


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
        self.ready: Any = None  # usearch.index.Index once built or loaded
        self._largest = 0  # the largest key in the graph
        self._saved = 0  # rows in the graph at the last save
        self._builder: threading.Thread | None = None
        self.loaded = False  # the graph came from the saved file (not rebuilt)

    def start(
        self, rows: Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]
    ) -> None:
        """Build or load the graph on a background thread (once)."""
        if self._builder is not None or self.ready is not None:
            return
        self._builder = threading.Thread(
            target=self._build, args=(rows,), name="rcpkit-ann", daemon=True
        )
        self._builder.start()

    def wait(self, timeout: float) -> bool:
        """Wait for a started build (benchmarks, tests); True once the graph is ready."""
        if self._builder is not None:
            self._builder.join(timeout)
        return self.ready is not None

    def _new(self) -> Any:
        return import_usearch_index().Index(
            ndim=self.dimension,
            metric="ip",  # unit vectors: inner product is the cosine
            dtype="f32",
            connectivity=self.settings.connectivity,
            expansion_add=self.settings.expansion_add,
            expansion_search=self.settings.expansion_search,
        )

    def _build(
        self, rows: Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]
    ) -> None:
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
                self.ready, self._largest = graph, largest
                self._save()
        except Exception:  # the exact path keeps answering
            _log.exception("building the ANN graph failed; dense search stays exact")

    def add(self, keys: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        """New rows (called under the writer lock)."""
        graph = self.ready
        if graph is None or not len(keys):
            return
        newer = keys > self._largest
        if newer.any():
            graph.add(keys[newer], matrix[newer], threads=0)
            self._largest = int(keys[newer].max())
        if len(graph) > self._saved * (1 + _RESAVE_GROWTH):
            self._save()

    # --- persistence ---

    def _record(self, graph: Any) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "dimension": self.dimension,
            "connectivity": self.settings.connectivity,
            "expansion_add": self.settings.expansion_add,
            "largest_key": self._largest,
            "rows": len(graph),
        }

    def _save(self) -> None:
        graph = self.ready
        if self.path is None or graph is None:
            return
        try:
            temporary = self.path.with_name(self.path.name + ".tmp")
            graph.save(str(temporary))
            record = {**self._record(graph), "bytes": temporary.stat().st_size}
            sidecar = self.path.with_name(self.path.name + ".json")
            sidecar_tmp = sidecar.with_name(sidecar.name + ".tmp")
            sidecar_tmp.write_text(json.dumps(record))
            os.replace(temporary, self.path)  # a crash between these leaves a mismatch: rebuilt
            os.replace(sidecar_tmp, sidecar)
            self._saved = len(graph)
        except OSError:
            _log.warning("could not save the ANN graph to %s", self.path, exc_info=True)

    def _load(self) -> tuple[Any, int]:
        if self.path is None:
            return None, 0
        sidecar = self.path.with_name(self.path.name + ".json")
        try:
            record = json.loads(sidecar.read_text())
            if record.get("bytes") != self.path.stat().st_size:
                return None, 0
        except (OSError, ValueError):
            return None, 0
        expected = {
            key: value
            for key, value in self._record(self._new()).items()
            if key not in ("largest_key", "rows")
        }
        if any(record.get(key) != value for key, value in expected.items()):
            return None, 0
        graph = self._new()
        try:
            graph.load(str(self.path))
        except Exception:
            return None, 0
        if len(graph) != record.get("rows"):
            return None, 0
        self._saved = len(graph)
        self.loaded = True
        return graph, int(record["largest_key"])
