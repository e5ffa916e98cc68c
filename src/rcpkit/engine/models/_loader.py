"""Choosing a model from a one-word configuration value."""

from __future__ import annotations

from pathlib import Path

from rcpkit.engine.models._bundled import load_minilm, load_splade_tiny
from rcpkit.engine.models._external import PREFIX, ExternalVectors, external_spec
from rcpkit.engine.models._hashing import HashingEmbedder, HashingSparseEncoder
from rcpkit.engine.models._interfaces import Embedder, SparseEncoder
from rcpkit.engine.models._splade import SpladeEncoder
from rcpkit.engine.models._transformer_embedder import TransformerEmbedder

__all__ = ["embedder_spec", "load_embedder", "load_sparse_encoder"]

HASHING_IDENTITY = "rcpkit-hashing-v1"  # HashingEmbedder.identity before its ":<dimension>"


def _hashing_size(spec: str, default: int) -> int | None:
    name, _, size = spec.partition(":")
    if name != "hashing":
        return None
    try:
        return int(size) if size else default
    except ValueError:
        raise ValueError(f"expected 'hashing:<integer>', got {spec!r}") from None


def load_embedder(
    spec: str | None = None,
    *,
    threads: int = 2,
    batch_size: int = 16,
    expected_sha256: str | None = None,
) -> Embedder:
    """`None`/"minilm" → bundled MiniLM; "hashing:<dim>" → HashingEmbedder; a directory → ONNX;
    "vectors:[<name>:]<dim>" → your own vectors (no model; ``rcpkit.engine.models._external``).

    A directory must hold `model.onnx` and `tokenizer.json`; `expected_sha256`
    pins its model file (§15.7).
    """
    if spec is None or spec == "minilm":
        return load_minilm(threads=threads, batch_size=batch_size)
    external = external_spec(spec)
    if external is not None:
        return ExternalVectors(external[1], external[0])
    dimension = _hashing_size(spec, 256)
    if dimension is not None:
        return HashingEmbedder(dimension)
    directory = Path(spec).expanduser()
    if directory.is_dir():
        return TransformerEmbedder.from_onnx_directory(
            directory, expected_sha256=expected_sha256, threads=threads, batch_size=batch_size
        )
    raise ValueError(
        f"unknown embedder {spec!r}: expected 'minilm', 'hashing:<dimension>', "
        "'vectors:[<name>:]<dimension>' or a directory holding model.onnx and tokenizer.json"
    )


def embedder_spec(identity: str | None) -> str | None:
    """The spec that loads the model an index recorded as ``identity``, when it says so.

    Your own vectors and the hashing embedder are named by their identity; a
    model file is not (None: the configured or default model, checked against it).
    """
    if identity is None:
        return None
    if identity.startswith(PREFIX):
        return identity
    name, _, size = identity.partition(":")
    return f"hashing:{size}" if name == HASHING_IDENTITY and size.isdigit() else None


def load_sparse_encoder(
    spec: str | None = None,
    *,
    batch_size: int = 16,
    expected_sha256: str | None = None,
) -> SparseEncoder:
    """`None`/"splade-tiny" → bundled splade-tiny; "hashing[:<vocab>]"; a directory → SPLADE.

    A directory must hold a BERT masked-LM as `config.json`, `model.safetensors`
    and `tokenizer.json`.
    """
    if spec is None or spec == "splade-tiny":
        return load_splade_tiny(batch_size=batch_size)
    vocabulary = _hashing_size(spec, 1 << 18)
    if vocabulary is not None:
        return HashingSparseEncoder(vocabulary)
    directory = Path(spec).expanduser()
    if directory.is_dir():
        return SpladeEncoder.from_directory(
            directory, expected_sha256=expected_sha256, batch_size=batch_size
        )
    raise ValueError(
        f"unknown sparse encoder {spec!r}: expected 'splade-tiny', 'hashing:<vocabulary>' "
        "or a directory holding config.json, model.safetensors and tokenizer.json"
    )
