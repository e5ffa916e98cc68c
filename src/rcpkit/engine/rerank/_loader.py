"""Choosing a reranker from a configuration string, through a registry of builders."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from rcpkit.engine.models import Embedder
from rcpkit.engine.rerank._cross_encoder import CrossEncoderReranker
from rcpkit.engine.rerank._interfaces import Reranker
from rcpkit.engine.rerank._late_interaction import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_CACHE_SIZE,
    LateInteractionReranker,
)

__all__ = ["RERANKER_SCHEMES", "load_reranker"]


@dataclass(frozen=True)
class _Options:
    embedder: Embedder
    batch_size: int
    threads: int
    expected_sha256: str | None
    cache_size: int
    cache_bytes: int


#: Builds a reranker from the part of the spec after `<scheme>:` (empty for a bare name).
_Builder = Callable[[str, _Options], Reranker]


def _late_interaction(argument: str, options: _Options) -> Reranker:
    if argument:
        raise ValueError(f"'colbert'/'maxsim' take no argument, got {argument!r}")
    return LateInteractionReranker(
        options.embedder,
        batch_size=options.batch_size,
        cache_size=options.cache_size,
        cache_bytes=options.cache_bytes,
    )


def _onnx_directory(argument: str, options: _Options) -> Reranker:
    return CrossEncoderReranker.from_onnx_directory(
        Path(argument).expanduser(),
        expected_sha256=options.expected_sha256,
        threads=options.threads,
        batch_size=options.batch_size,
    )


def _sentence_transformers(argument: str, options: _Options) -> Reranker:
    if not argument:
        raise ValueError("expected 'st:<model name or path>'")
    return CrossEncoderReranker.from_sentence_transformers(argument, batch_size=options.batch_size)


_BUILDERS: Final[Mapping[str, _Builder]] = MappingProxyType(
    {
        "colbert": _late_interaction,
        "maxsim": _late_interaction,
        "onnx": _onnx_directory,
        "st": _sentence_transformers,
    }
)
#: Every spec scheme `load_reranker` understands, for help texts and validation.
RERANKER_SCHEMES: Final[tuple[str, ...]] = tuple(_BUILDERS)


def _scheme(spec: str | None) -> tuple[str, str]:
    if spec is None:
        return "colbert", ""
    scheme, _, argument = spec.partition(":")
    if scheme in _BUILDERS:
        return scheme, argument
    # A bare directory is an ONNX cross-encoder; "onnx:<dir>" says so explicitly.
    if Path(spec).expanduser().is_dir():
        return "onnx", spec
    raise ValueError(
        f"unknown reranker {spec!r}: expected 'colbert' (or 'maxsim'), 'st:<model>', "
        "or a directory holding model.onnx and tokenizer.json"
    )


def load_reranker(
    spec: str | None,
    embedder: Embedder,
    *,
    batch_size: int = 16,
    threads: int = 2,
    expected_sha256: str | None = None,
    cache_size: int = DEFAULT_CACHE_SIZE,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
) -> Reranker:
    """`None`/"colbert"/"maxsim" → MaxSim over `embedder`; a directory or "onnx:<dir>" →
    ONNX cross-encoder (`expected_sha256` pins its model.onnx); "st:<name>" →
    sentence-transformers. The cache bounds apply to MaxSim only.
    """
    scheme, argument = _scheme(spec)
    options = _Options(embedder, batch_size, threads, expected_sha256, cache_size, cache_bytes)
    return _BUILDERS[scheme](argument, options)
