"""One description of an ONNX model on disk, for every loader that opens one.

The embedder (``TransformerEmbedder.from_onnx``), the cross-encoder reranker
(``CrossEncoderReranker.from_onnx``) and its pair scorer all take the same
settings: where ``model.onnx`` and ``tokenizer.json`` are, the sha256 each must
have (§15.7), the identity to report, the token limit, threads and batch size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

from rcpkit.engine.models._integrity import ModelLoadError, verify_sha256
from rcpkit.engine.models._tokenizer import read_max_tokens

__all__ = ["OnnxOptions", "OnnxSpec"]


class OnnxOptions(TypedDict, total=False):
    """The keyword form of :class:`OnnxSpec`'s settings (``from_onnx(..., threads=1)``)."""

    expected_sha256: str | None
    tokenizer_sha256: str | None
    identity: str | None
    max_tokens: int | None
    threads: int
    batch_size: int


@dataclass(frozen=True, slots=True)
class OnnxSpec:
    """An ONNX model file, its tokenizer, and how to load and run them."""

    model: Path
    tokenizer: Path
    expected_sha256: str | None = None  # §15.7: refuse a model file with another digest
    tokenizer_sha256: str | None = None
    identity: str | None = None  # default: <folder>@onnx:sha256:<first 12 hex>
    max_tokens: int | None = None  # default: what tokenizer.json (or the folder) declares
    threads: int = 2
    batch_size: int = 16

    @classmethod
    def of_directory(cls, directory: Path, **options: Unpack[OnnxOptions]) -> OnnxSpec:
        """A user-supplied directory holding ``model.onnx`` and ``tokenizer.json``."""
        if not directory.is_dir():
            raise ModelLoadError(f"not a model directory: {directory}")
        return cls(directory / "model.onnx", directory / "tokenizer.json", **options)

    def verify(self) -> str:
        """The model file's sha256, checked (and the tokenizer's, when pinned) before use."""
        sha256 = verify_sha256(self.model, self.expected_sha256)
        if self.tokenizer_sha256 is not None:
            verify_sha256(self.tokenizer, self.tokenizer_sha256)
        return sha256

    def token_limit(self) -> int:
        return self.max_tokens or read_max_tokens(self.tokenizer)

    def identity_of(self, sha256: str) -> str:
        return self.identity or f"{self.model.parent.name}@onnx:sha256:{sha256[:12]}"
