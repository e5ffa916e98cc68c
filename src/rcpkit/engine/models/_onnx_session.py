"""A typed wrapper around one onnxruntime session of a BERT-style token encoder."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._integrity import ModelLoadError
from rcpkit.engine.models._tokenizer import TokenBatch

__all__ = ["OnnxTokenEncoder"]

_TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")


def session_options(ort: Any, threads: int) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Spinning threads burn a core between requests; a server mostly waits.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    return options


class OnnxTokenEncoder:
    """Runs `model.onnx` on a token batch and returns its per-token hidden states.

    onnxruntime's `InferenceSession.run` is safe to call from several threads.
    """

    def __init__(self, model_path: Path, threads: int = 2) -> None:
        try:
            # import_module: onnxruntime ships no type information, and stays optional.
            ort = importlib.import_module("onnxruntime")
        except ImportError as error:
            raise ModelLoadError("ONNX models need `pip install onnxruntime`") from error
        self._session: Any = ort.InferenceSession(
            str(model_path), session_options(ort, threads), providers=["CPUExecutionProvider"]
        )
        self._inputs = {node.name for node in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self._inputs:
            raise ModelLoadError(f"{model_path}: expected input_ids and attention_mask inputs")
        self._output = self._token_output(model_path)

    def _token_output(self, model_path: Path) -> str:
        outputs = self._session.get_outputs()
        for node in outputs:
            if node.name in _TOKEN_OUTPUTS:
                return str(node.name)
        for node in outputs:
            if len(node.shape) == 3:
                return str(node.name)
        raise ModelLoadError(f"{model_path}: no (batch, sequence, hidden) output to pool")

    def hidden_states(self, batch: TokenBatch) -> npt.NDArray[np.float32]:
        """Per-token outputs, `(batch, sequence, hidden)` float32."""
        feeds = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = batch.token_type_ids
        (states,) = self._session.run([self._output], feeds)
        return np.asarray(states, dtype=np.float32)
