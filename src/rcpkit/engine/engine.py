"""The engine's shared resources: store, dense index, model slots and per-index state.

A leaf of the engine: it holds what the pipeline (``rcpkit.engine.retrieve``),
the indexer (``rcpkit.engine.ingest.indexer``) and the handlers work on, and
imports none of them. ``rcpkit.engine.open.open_engine`` assembles one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from rcpkit.engine.backend import Backend
from rcpkit.engine.config import EngineConfig
from rcpkit.engine.graph.tenants import Graphs
from rcpkit.engine.models import Embedder, SparseEncoder
from rcpkit.engine.rerank import HybridReranker, Reranker, load_reranker
from rcpkit.engine.state.memory import MemoryBank
from rcpkit.engine.store.calibration import Calibration, TenantCalibrations
from rcpkit.engine.transform.rewriter import Rewriter
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Engine", "ModelSlot"]

log = logging.getLogger("rcpkit.engine")

_CALIBRATION_SAMPLE = 4096  # vectors a shared store hands over for confidence calibration


class ModelSlot:
    """A model loaded on a background thread from the moment the engine opens: the
    index and the mirror open meanwhile, and ``Engine.warm`` (what a server runs
    before it answers ``initialize``) waits for it."""

    def __init__(self, name: str, load: Callable[[], Any]) -> None:
        self.name = name
        self._future: Future[Any] = Future()

        def run() -> None:
            try:
                self._future.set_result(load())
            except BaseException as error:  # reported on use, as -32010
                # STYLE §3: the library's text goes to the log, never into error.data.
                log.error("loading the %s model failed", name, exc_info=error)
                self._future.set_exception(error)

        self._loader = threading.Thread(target=run, name=f"load-{name}", daemon=True)
        self._loader.start()

    def settle(self) -> None:
        """Wait for the background load to end. A daemon thread still inside a
        native model constructor (onnxruntime, tokenizers) when the interpreter
        exits aborts the process with "terminate called without an active
        exception" (exit 134), so a command that never used the model, such as
        ``rcpkit delete``, must not exit before the load has finished."""
        self._loader.join()

    def get(self, checkpoint: Callable[[], None] | None = None) -> Any:
        while True:
            try:
                return self._future.result(timeout=0.05)
            except TimeoutError:
                if checkpoint is not None:
                    checkpoint()
            except Exception:
                raise RCPError(
                    ErrorCode.BACKEND_UNAVAILABLE,
                    f"the {self.name} model is unavailable",
                    detail="it failed to load; the server's log says why",
                ) from None


class Engine:
    """One index on disk with its models; indexing and retrieval live in their own modules."""

    def __init__(
        self,
        config: EngineConfig,
        embedder: ModelSlot,
        sparse: ModelSlot | None = None,
        *,
        backend: Backend,
        identity: str,
        dimension: int,
        cursor_secret: bytes,
        rewriter: Rewriter,
        graphs: Graphs | None = None,
    ) -> None:
        self.config = config
        self.backend = backend
        self.store = store = backend.store
        self.embedder_slot = embedder
        self.sparse_slot = sparse
        self.identity = identity
        self.dimension = dimension
        self.dense = store.open_dense(dimension, config.dense_policy)
        self.started = time.time()
        # §15.6: confidence is calibrated on the caller's tenant's corpus alone.
        # The figures are agreed in the store, so every process shows the same
        # confidence (issue 52); a standby, which writes nothing, keeps its own.
        self.calibrations = TenantCalibrations(
            self.dense.live_count,
            lambda tenant: self.dense.sample(_CALIBRATION_SAMPLE, tenant),
            None if backend.read_only else store,
        )
        self.cursor_secret = cursor_secret
        self.capabilities_pagination = True
        self.state = state = backend.state
        self.trajectories = state.trajectories
        self.feedback = state.feedback
        self.memory = MemoryBank(state.memory)
        self.rewriter = rewriter
        self.graphs = graphs
        self._rerankers: dict[str, Reranker] = {}
        self._rerankers_lock = threading.Lock()

    def calibrate(self, tenant: str | None = None) -> Calibration:
        """``tenant``'s confidence calibration, refreshed when its collection has grown."""
        return self.calibrations.of(tenant)

    def reranker(self, method: str, checkpoint: Callable[[], None] | None = None) -> Reranker:
        """The reranker for ``method`` (§7.6), built on first use."""
        with self._rerankers_lock:
            if method not in self._rerankers:
                spec = self.config.cross_encoder if method == "cross-encoder" else None
                if method == "cross-encoder" and spec is None:
                    # Issue 33: no model configured, so the engine's own hybrid scorer.
                    config = self.config
                    hybrid = HybridReranker(
                        self.embedder(checkpoint),
                        self.store.index,
                        feedback=config.prf_documents if config.prf else 0,
                        feedback_terms=config.prf_terms,
                        min_feedback_terms=config.prf_min_feedback_terms,
                        proximity_weight=config.proximity_weight,
                        smoothing_weight=config.smoothing_weight,
                    )
                    self._rerankers[method] = hybrid
                else:
                    self._rerankers[method] = load_reranker(spec, self.embedder(checkpoint))
            return self._rerankers[method]

    def dates_of(self, keys: Sequence[int], name: str) -> dict[int, int | None]:
        """A date field (epoch ms, as normalised at write time) per chunk key."""
        values = self.store.filter_values(keys, name)
        return {
            key: max(value)
            if isinstance(value, list) and value
            else value
            if isinstance(value, int)
            else None
            for key, value in values.items()
        }

    def embedder(self, checkpoint: Callable[[], None] | None = None) -> Embedder:
        model: Embedder = self.embedder_slot.get(checkpoint)
        if model.identity != self.identity:
            raise RCPError(
                ErrorCode.BACKEND_UNAVAILABLE,
                "the configured embedding model is not the one this index was built with",
                detail=f"index: {self.identity}; model: {model.identity}",
            )
        return model

    def sparse_encoder(self, checkpoint: Callable[[], None] | None = None) -> SparseEncoder | None:
        if self.sparse_slot is None:
            return None
        model: SparseEncoder = self.sparse_slot.get(checkpoint)
        return model

    def warm(self) -> None:
        """Wait for the models and run each once, so the first request pays for neither.

        A server calls this before it answers ``initialize`` (issue 51: a fresh
        server's first retrieve was ~50× a warm one, all of it the model load). A
        model that fails to load is reported on use (-32010), as without warming.
        """
        try:
            self.embedder().embed(["warm"], "query")
            encoder = self.sparse_encoder()
            if encoder is not None:
                encoder.encode(["warm"], "query")
        except RCPError:
            return  # the slot has logged why; retrieve answers -32010
        log.info("models loaded and warm")

    def close(self) -> None:
        self.embedder_slot.settle()
        if self.sparse_slot is not None:
            self.sparse_slot.settle()
        self.state.close()
        self.store.close()
        if self.graphs is not None:
            self.graphs.close()
