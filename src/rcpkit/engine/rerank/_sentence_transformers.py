"""A sentence-transformers `CrossEncoder` behind the pair-scorer interface (torch, optional)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Final

from rcpkit.engine.models import ModelLoadError
from rcpkit.engine.rerank._interfaces import Scores
from rcpkit.engine.rerank._relevance import relevance_scores

__all__ = ["SENTENCE_TRANSFORMERS_INSTALL", "SentenceTransformersPairScorer"]

SENTENCE_TRANSFORMERS_INSTALL: Final = "pip install sentence-transformers"


def _import_sentence_transformers() -> Any:
    try:
        # Lazily, and untyped: it imports torch, which a default install never needs.
        return importlib.import_module("sentence_transformers")
    except ImportError as error:
        raise ModelLoadError(
            f"sentence-transformers cross-encoders need `{SENTENCE_TRANSFORMERS_INSTALL}` "
            "(it installs torch); without it, export the model to ONNX and pass the "
            "directory holding model.onnx and tokenizer.json instead"
        ) from error


class SentenceTransformersPairScorer:
    """`CrossEncoder.predict` on (query, passage) pairs, one call per batch.

    Scores are what the model's configured activation gives (a sigmoid for
    one-label models), not raw logits as on the ONNX path; both rank the same.
    The identity names the model but pins no bytes: prefer an ONNX directory
    with `expected_sha256` for a reproducible configuration (§15.7).
    """

    def __init__(
        self, name_or_path: str, *, device: str = "cpu", max_tokens: int | None = None
    ) -> None:
        module = _import_sentence_transformers()
        try:
            self._model: Any = module.CrossEncoder(
                name_or_path, device=device, max_length=max_tokens
            )
        except (OSError, ValueError) as error:
            raise ModelLoadError(f"cannot load cross-encoder {name_or_path!r}: {error}") from error
        self._identity = f"{name_or_path}@sentence-transformers-{module.__version__}"

    @property
    def identity(self) -> str:
        """The model name or path and the library version."""
        return self._identity

    def score_pairs(self, query: str, passages: Sequence[str]) -> Scores:
        """One score per (query, passage), as one model batch."""
        logits = self._model.predict(
            [(query, passage) for passage in passages],
            batch_size=max(len(passages), 1),
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return relevance_scores(logits, len(passages))
