"""Embedding models behind small interfaces: dense (§7.3), sparse (§7.4), multi-vector (§7.5).

Interfaces (`_interfaces`):
    `Embedder` — `embed(texts, kind)` gives an `(n, dimension)` float32 matrix of unit
    rows; `embed_tokens` gives one unit-row matrix per text for late interaction;
    `count_tokens` counts with the model's own tokenizer for token budgets (§7.7.2).
    `SparseEncoder` — `encode(texts, kind)` gives one `SparseVector(indices, values)`.
    Both carry an `identity` to advertise and pin (§15.7).

Real implementations:
    `TransformerEmbedder` — any BERT-style encoder with mean pooling; `load_minilm()`
    is all-MiniLM-L6-v2 as int8 ONNX on onnxruntime (384 dims, 256 word pieces),
    sha256-checked before loading; a user directory with `model.onnx` and
    `tokenizer.json` takes the same path. `SpladeEncoder` — a BERT masked-LM read as
    SPLADE weights, run on numpy (`load_splade_tiny()`, no torch).

Deterministic implementations for fast tests: `HashingEmbedder`, `HashingSparseEncoder`.

Scoring and wire helpers: `maxsim`/`maxsim_many` (§7.5 MaxSim) and
`encode_f32_base64`/`decode_f32_base64` (§7.3.1). `embed_between` embeds a whole
request length-sorted once, with a cancellation checkpoint between the model's
batches. `load_embedder(spec)` and `load_sparse_encoder(spec)` pick a model from a
configuration string. The building blocks other model families (the cross-encoder
rerankers) reuse:
`open_tokenizer`, `read_max_tokens`, `session_options`, `verify_sha256`.
"""

from rcpkit.engine.models._between import embed_between
from rcpkit.engine.models._bundled import (
    MINILM_INSTALL,
    SPLADE_INSTALL,
    load_minilm,
    load_splade_tiny,
)
from rcpkit.engine.models._external import ExternalVectors, is_external, own_vectors
from rcpkit.engine.models._hashing import HashingEmbedder, HashingSparseEncoder
from rcpkit.engine.models._integrity import ModelIntegrityError, ModelLoadError, verify_sha256
from rcpkit.engine.models._interfaces import (
    EMBED_KINDS,
    Embedder,
    EmbedKind,
    SparseEncoder,
    SparseVector,
    Vectors,
    check_kind,
)
from rcpkit.engine.models._loader import embedder_spec, load_embedder, load_sparse_encoder
from rcpkit.engine.models._maxsim import maxsim, maxsim_many
from rcpkit.engine.models._onnx_session import session_options
from rcpkit.engine.models._onnx_spec import OnnxOptions, OnnxSpec
from rcpkit.engine.models._splade import SpladeEncoder
from rcpkit.engine.models._tokenizer import open_tokenizer, read_max_tokens
from rcpkit.engine.models._transformer_embedder import TransformerEmbedder
from rcpkit.engine.models._vectors import decode_f32_base64, encode_f32_base64, l2_normalize

__all__ = [
    "EMBED_KINDS",
    "MINILM_INSTALL",
    "SPLADE_INSTALL",
    "EmbedKind",
    "Embedder",
    "ExternalVectors",
    "HashingEmbedder",
    "HashingSparseEncoder",
    "ModelIntegrityError",
    "ModelLoadError",
    "OnnxOptions",
    "OnnxSpec",
    "SparseEncoder",
    "SparseVector",
    "SpladeEncoder",
    "TransformerEmbedder",
    "Vectors",
    "check_kind",
    "decode_f32_base64",
    "embed_between",
    "embedder_spec",
    "is_external",
    "encode_f32_base64",
    "l2_normalize",
    "own_vectors",
    "load_embedder",
    "load_minilm",
    "load_sparse_encoder",
    "load_splade_tiny",
    "maxsim",
    "maxsim_many",
    "open_tokenizer",
    "read_max_tokens",
    "session_options",
    "verify_sha256",
]
