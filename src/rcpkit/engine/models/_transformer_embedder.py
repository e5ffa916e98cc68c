"""Sentence embeddings and token vectors from any BERT-style token encoder.

The encoder (onnxruntime or numpy) yields per-token hidden states; this
module does the sentence-transformers pooling (mean over the attention mask,
then L2) for §7.3, and keeps the normalised content tokens for §7.5.

Every core embeds (issue 51): an ONNX embedder runs ``workers`` batches at once,
each on a one-thread onnxruntime session call (the call releases the GIL), rather
than one batch at a time split over an intra-op pool whose threads meet at every
operator. The batches are the same length-sorted ones either way, so the vectors
are too. At most two batches per worker are queued at a time, so a query's batch
waits behind no more than that of a large call, and ``between`` (a cancel) stops a
call with no further batch started.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, TypeVar, Unpack

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._interfaces import EmbedKind, Vectors, check_kind
from rcpkit.engine.models._onnx_session import OnnxTokenEncoder
from rcpkit.engine.models._onnx_spec import OnnxOptions, OnnxSpec
from rcpkit.engine.models._tokenizer import ModelTokenizer, TokenBatch
from rcpkit.engine.models._vectors import l2_normalize

__all__ = ["Between", "TokenEncoder", "TransformerEmbedder"]

_Out = TypeVar("_Out")
_QUEUED_PER_WORKER = 2  # batches queued per worker: the next is ready when one ends

#: Runs on the calling thread before each batch is started, given the texts embedded
#: so far; what it raises (a cancel) ends the call.
Between = Callable[[int], None]


class TokenEncoder(Protocol):
    """Anything that maps a token batch to `(batch, sequence, hidden)` states."""

    def hidden_states(self, batch: TokenBatch) -> npt.NDArray[np.float32]:
        """Per-token hidden states for a padded batch."""
        ...


class TransformerEmbedder:
    """The real `Embedder`: mean-pooled, L2-normalised transformer outputs.

    `prefixes` serves asymmetric models (e5's "query: "/"passage: ") through
    §7.3 `kind`; symmetric models such as all-MiniLM-L6-v2 leave it empty.
    """

    def __init__(
        self,
        encoder: TokenEncoder,
        tokenizer: ModelTokenizer,
        *,
        identity: str,
        batch_size: int = 16,
        prefixes: Mapping[EmbedKind, str] | None = None,
        workers: int = 1,
    ) -> None:
        """``workers``: batches encoded at once; more than one needs an ``encoder``
        that may be called from several threads (onnxruntime's session may)."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._encoder = encoder
        self._tokenizer = tokenizer
        self._identity = identity
        self._batch_size = batch_size
        self._prefixes = dict(prefixes or {})
        # One probe pass learns the width and fails at load time, not on the first request.
        probe = next(self._tokenizer.batches([""], 1))
        self._dimension = int(self._encoder.hidden_states(probe).shape[-1])

    @classmethod
    def from_spec(
        cls, spec: OnnxSpec, prefixes: Mapping[EmbedKind, str] | None = None
    ) -> TransformerEmbedder:
        """Load an ONNX encoder after checking its sha256 (when one is expected)."""
        sha256 = spec.verify()
        return cls(
            # One thread per session call, ``threads`` calls at once: see the module.
            OnnxTokenEncoder(spec.model, 1),
            ModelTokenizer(spec.tokenizer, spec.token_limit()),
            identity=spec.identity_of(sha256),
            batch_size=spec.batch_size,
            prefixes=prefixes,
            workers=spec.threads,
        )

    @classmethod
    def from_onnx(
        cls,
        model_path: Path,
        tokenizer_path: Path,
        *,
        prefixes: Mapping[EmbedKind, str] | None = None,
        **options: Unpack[OnnxOptions],
    ) -> TransformerEmbedder:
        """Load an ONNX encoder after checking its sha256 (when one is expected)."""
        return cls.from_spec(OnnxSpec(model_path, tokenizer_path, **options), prefixes)

    @classmethod
    def from_onnx_directory(
        cls,
        directory: Path,
        *,
        prefixes: Mapping[EmbedKind, str] | None = None,
        **options: Unpack[OnnxOptions],
    ) -> TransformerEmbedder:
        """Load a user-supplied directory holding `model.onnx` and `tokenizer.json`."""
        return cls.from_spec(OnnxSpec.of_directory(directory, **options), prefixes)

    @property
    def dimension(self) -> int:
        """Hidden size of the encoder (384 for MiniLM)."""
        return self._dimension

    @property
    def identity(self) -> str:
        """The pinned identity given at load time (§15.7)."""
        return self._identity

    @property
    def max_tokens(self) -> int:
        """Word pieces per input, [CLS] and [SEP] included; the rest is truncated."""
        return self._tokenizer.max_tokens

    def embed(
        self, texts: Sequence[str], kind: EmbedKind = "document", *, between: Between | None = None
    ) -> Vectors:
        """Mean-pool each text's tokens (special tokens included, as trained), then L2.

        ``between``: called before each batch (see `Between`), so a long call can be
        cancelled between batches and still be length-sorted as a whole.
        """
        pooled = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for batch, sums in self._forward(texts, kind, _mean_pool, between):
            pooled[batch.rows] = sums
        return l2_normalize(pooled)

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        """L2-normalised content-token vectors; [CLS], [SEP] and padding are excluded."""
        matrices: list[Vectors] = [np.zeros((0, self._dimension), np.float32)] * len(texts)
        for batch, rows in self._forward(texts, kind, _content_tokens):
            for position, row in enumerate(batch.rows):
                matrices[row] = rows[position]
        return matrices

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces in each whole text, untruncated and without special tokens."""
        return self._tokenizer.count(texts)

    def _forward(
        self,
        texts: Sequence[str],
        kind: EmbedKind,
        reduce: Callable[[TokenBatch, npt.NDArray[np.float32]], _Out],
        between: Between | None = None,
    ) -> Iterator[tuple[TokenBatch, _Out]]:
        """Each batch with ``reduce`` of its hidden states, in order.

        ``reduce`` runs beside the encoder on the worker, so only its (small) result
        is held, not a whole call's per-token states.
        """
        prefix = self._prefixes.get(check_kind(kind), "")
        inputs = [prefix + text for text in texts] if prefix else texts
        batches = self._tokenizer.batches(inputs, self._batch_size)

        def encode(batch: TokenBatch) -> tuple[TokenBatch, _Out]:
            return batch, reduce(batch, self._encoder.hidden_states(batch))

        if self._workers == 1:
            yield from _in_turn(batches, encode, between)
            return
        listed = list(batches)
        if len(listed) == 1:
            yield from _in_turn(listed, encode, between)
            return
        yield from self._side_by_side(listed, encode, between)

    def _side_by_side(
        self,
        batches: Sequence[TokenBatch],
        encode: Callable[[TokenBatch], tuple[TokenBatch, _Out]],
        between: Between | None,
    ) -> Iterator[tuple[TokenBatch, _Out]]:
        """``batches`` on the pool, in order, a few queued ahead; on exit the unstarted
        ones are cancelled (a cancel wastes no model time)."""
        pending: deque[Future[tuple[TokenBatch, _Out]]] = deque()
        done = 0
        try:
            for batch in batches:
                if len(pending) == self._workers * _QUEUED_PER_WORKER:
                    finished = pending.popleft().result()
                    done += len(finished[0].rows)
                    yield finished
                if between is not None:
                    between(done)
                pending.append(self._executor().submit(encode, batch))
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()

    def _executor(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed")
            return self._pool


def _in_turn(
    batches: Iterable[TokenBatch],
    encode: Callable[[TokenBatch], tuple[TokenBatch, _Out]],
    between: Between | None,
) -> Iterator[tuple[TokenBatch, _Out]]:
    """``batches`` one after another on the calling thread."""
    done = 0
    for batch in batches:
        if between is not None:
            between(done)
        yield encode(batch)
        done += len(batch.rows)


def _mean_pool(batch: TokenBatch, states: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    mask = batch.attention_mask[..., np.newaxis].astype(np.float32)
    sums: npt.NDArray[np.float32] = (states * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)
    return sums


def _content_tokens(batch: TokenBatch, states: npt.NDArray[np.float32]) -> list[Vectors]:
    return [
        l2_normalize(states[position][batch.content_mask[position]])
        for position in range(len(batch.rows))
    ]
