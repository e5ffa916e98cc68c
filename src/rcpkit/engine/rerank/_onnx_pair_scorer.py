"""An ONNX cross-encoder on onnxruntime: token pairs in, one relevance logit per pair out."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from rcpkit.engine.models import ModelLoadError, OnnxSpec, session_options
from rcpkit.engine.rerank._interfaces import Scores
from rcpkit.engine.rerank._pair_tokenizer import PairBatch, PairTokenizer
from rcpkit.engine.rerank._relevance import relevance_scores

__all__ = ["OnnxPairScorer"]

_REQUIRED_INPUTS: Final = frozenset({"input_ids", "attention_mask"})
_OPTIONAL_INPUTS: Final = frozenset({"token_type_ids"})
_ONNX_INTEGER_TYPES: Final[dict[str, np.dtype[Any]]] = {
    "tensor(int64)": np.dtype(np.int64),
    "tensor(int32)": np.dtype(np.int32),
}


def _open_session(model_path: Path, threads: int) -> Any:
    try:
        # import_module: onnxruntime ships no type information, and stays optional.
        ort = importlib.import_module("onnxruntime")
    except ImportError as error:
        raise ModelLoadError("ONNX cross-encoders need `pip install onnxruntime`") from error
    try:
        return ort.InferenceSession(
            str(model_path), session_options(ort, threads), providers=["CPUExecutionProvider"]
        )
    except Exception as error:  # onnxruntime raises its own untyped pybind errors
        raise ModelLoadError(f"{model_path}: onnxruntime cannot load it: {error}") from error


def _input_types(session: Any, model_path: Path) -> dict[str, np.dtype[Any]]:
    types = {node.name: _ONNX_INTEGER_TYPES.get(node.type) for node in session.get_inputs()}
    unknown = set(types) - _REQUIRED_INPUTS - _OPTIONAL_INPUTS
    if not set(types) >= _REQUIRED_INPUTS or unknown:
        raise ModelLoadError(
            f"{model_path}: a cross-encoder takes input_ids, attention_mask and optionally "
            f"token_type_ids; this graph takes {sorted(types)}"
        )
    untyped = sorted(name for name, dtype in types.items() if dtype is None)
    if untyped:
        raise ModelLoadError(f"{model_path}: inputs {untyped} are not int64 or int32 tensors")
    return {name: dtype for name, dtype in types.items() if dtype is not None}


def _logits_output(session: Any) -> str:
    names = [str(node.name) for node in session.get_outputs()]
    return "logits" if "logits" in names else names[0]


class OnnxPairScorer:
    """A user-supplied cross-encoder: `model.onnx` plus its `tokenizer.json`.

    The model file's sha256 is checked before onnxruntime opens it (§15.7),
    and one probe pair runs at load so a graph with the wrong outputs fails
    then, not on the first request. `InferenceSession.run` is thread-safe.
    """

    def __init__(self, spec: OnnxSpec) -> None:
        sha256 = spec.verify()
        self._tokenizer = PairTokenizer(spec.tokenizer, spec.token_limit())
        self._session = _open_session(spec.model, spec.threads)
        self._inputs = _input_types(self._session, spec.model)
        self._output = _logits_output(self._session)
        self._identity = spec.identity_of(sha256)
        self._probe(spec.model)

    @property
    def identity(self) -> str:
        """`<directory name>@onnx:sha256:<first 12 hex of model.onnx>` unless given."""
        return self._identity

    @property
    def max_tokens(self) -> int:
        """Tokens per pair, special tokens included; longer pairs are truncated."""
        return self._tokenizer.max_tokens

    def score_pairs(self, query: str, passages: Sequence[str]) -> Scores:
        """One relevance logit per (query, passage), as one model batch."""
        batch = self._tokenizer.encode(query, passages)
        (logits,) = self._session.run([self._output], self._feeds(batch))
        return relevance_scores(logits, len(passages))

    def _probe(self, model_path: Path) -> None:
        try:
            self.score_pairs("", [""])
        except ModelLoadError:
            raise
        except Exception as error:  # the graph does not run on a pair batch at all
            raise ModelLoadError(f"{model_path}: cannot score a probe pair: {error}") from error

    def _feeds(self, batch: PairBatch) -> dict[str, np.ndarray[Any, Any]]:
        arrays = {
            "input_ids": batch.input_ids,
            "attention_mask": batch.attention_mask,
            "token_type_ids": batch.token_type_ids,
        }
        return {
            name: arrays[name].astype(dtype, copy=False) for name, dtype in self._inputs.items()
        }
