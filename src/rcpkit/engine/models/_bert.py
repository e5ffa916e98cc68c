"""The BERT encoder forward pass (post-LayerNorm, absolute positions) in numpy.

Small BERTs (splade-tiny: 2 layers × 128) run fast enough on numpy alone,
which keeps torch out of the serving environment. Weights come from a
Hugging Face `config.json` and `model.safetensors`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._integrity import ModelLoadError
from rcpkit.engine.models._tokenizer import TokenBatch

__all__ = ["ACTIVATIONS", "BertConfig", "BertWeights", "NumpyBertEncoder", "layer_norm"]

Array = npt.NDArray[np.float32]
# Added to the attention scores of padding so that softmax gives them ~0 weight.
_MASKED = np.float32(-1e9)


def _erf(x: Array) -> Array:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution near 1):
    # numpy has no erf, and BERT's "gelu" is the exact erf form, not the tanh one.
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return np.asarray(np.sign(x) * (1.0 - poly * np.exp(-x * x)), dtype=np.float32)


def _gelu(x: Array) -> Array:
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _gelu_tanh(x: Array) -> Array:
    inner = np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x**3)
    return np.asarray(0.5 * x * (1.0 + np.tanh(inner)), dtype=np.float32)


def _relu(x: Array) -> Array:
    return np.maximum(x, np.float32(0.0))


#: `hidden_act` values of a BERT config.json.
ACTIVATIONS: dict[str, Callable[[Array], Array]] = {
    "gelu": _gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": _relu,
}


def layer_norm(x: Array, gain: Array, bias: Array, eps: float) -> Array:
    """LayerNorm over the last axis."""
    mean = x.mean(axis=-1, keepdims=True)
    variance = np.square(x - mean).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(variance + eps) * gain + bias, dtype=np.float32)


@dataclass(frozen=True)
class BertConfig:
    """The fields of a Hugging Face BERT `config.json` the forward pass reads."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    max_position_embeddings: int
    layer_norm_eps: float
    hidden_act: str

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        """Read and check a `config.json`."""
        raw = json.loads(path.read_text())
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ModelLoadError(f"{path}: only absolute position embeddings are supported")
        if raw.get("hidden_act", "gelu") not in ACTIVATIONS:
            raise ModelLoadError(f"{path}: unsupported hidden_act {raw['hidden_act']!r}")
        return cls(
            vocab_size=int(raw["vocab_size"]),
            hidden_size=int(raw["hidden_size"]),
            num_hidden_layers=int(raw["num_hidden_layers"]),
            num_attention_heads=int(raw["num_attention_heads"]),
            max_position_embeddings=int(raw["max_position_embeddings"]),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
            hidden_act=str(raw.get("hidden_act", "gelu")),
        )


# Older checkpoints (splade-tiny's among them) spell LayerNorm parameters gamma/beta.
_LEGACY_NORM_NAMES = {".weight": ".gamma", ".bias": ".beta"}


class BertWeights:
    """Name lookup across checkpoint spellings: `bert.` prefix or none, weight or gamma."""

    def __init__(self, tensors: Mapping[str, Array]) -> None:
        self._tensors = tensors
        self._prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def get(self, name: str, *, encoder: bool = True) -> Array:
        """The tensor `name`, under the encoder's prefix when `encoder` is set."""
        full = (self._prefix if encoder else "") + name
        spellings = [full]
        for current, legacy in _LEGACY_NORM_NAMES.items():
            if "LayerNorm" in full and full.endswith(current):
                spellings.append(full.removesuffix(current) + legacy)
        for spelling in spellings:
            if spelling in self._tensors:
                return self._tensors[spelling]
        raise ModelLoadError(f"checkpoint has no tensor {full!r}")

    def has(self, name: str) -> bool:
        """Whether the checkpoint has `name`, spelled exactly."""
        return name in self._tensors


@dataclass(frozen=True)
class _Layer:
    qkv_weight: Array  # (hidden, 3 × hidden), query|key|value fused into one product
    qkv_bias: Array
    attention_out_weight: Array
    attention_out_bias: Array
    attention_norm: tuple[Array, Array]
    intermediate_weight: Array
    intermediate_bias: Array
    output_weight: Array
    output_bias: Array
    output_norm: tuple[Array, Array]


def _linear(weights: BertWeights, name: str) -> tuple[Array, Array]:
    # Checkpoints store (out, in); x @ W.T is done once here, contiguously.
    return np.ascontiguousarray(weights.get(f"{name}.weight").T), weights.get(f"{name}.bias")


def _norm(weights: BertWeights, name: str) -> tuple[Array, Array]:
    return weights.get(f"{name}.weight"), weights.get(f"{name}.bias")


def _layer(weights: BertWeights, index: int) -> _Layer:
    base = f"encoder.layer.{index}"
    parts = [_linear(weights, f"{base}.attention.self.{p}") for p in ("query", "key", "value")]
    return _Layer(
        np.concatenate([w for w, _ in parts], axis=1),
        np.concatenate([b for _, b in parts]),
        *_linear(weights, f"{base}.attention.output.dense"),
        _norm(weights, f"{base}.attention.output.LayerNorm"),
        *_linear(weights, f"{base}.intermediate.dense"),
        *_linear(weights, f"{base}.output.dense"),
        _norm(weights, f"{base}.output.LayerNorm"),
    )


class NumpyBertEncoder:
    """BERT token encoder: `hidden_states(batch)` gives the last layer, `(B, T, hidden)`."""

    def __init__(self, config: BertConfig, weights: BertWeights) -> None:
        self.config = config
        self._activation = ACTIVATIONS[config.hidden_act]
        self.word_embeddings = weights.get("embeddings.word_embeddings.weight")
        self._positions = weights.get("embeddings.position_embeddings.weight")
        self._token_types = weights.get("embeddings.token_type_embeddings.weight")
        self._embedding_norm = _norm(weights, "embeddings.LayerNorm")
        self._layers = [_layer(weights, i) for i in range(config.num_hidden_layers)]

    def hidden_states(self, batch: TokenBatch) -> Array:
        """Last-layer states for a padded batch."""
        return self.forward(batch.input_ids, batch.attention_mask, batch.token_type_ids)

    def forward(
        self,
        input_ids: npt.NDArray[np.int64],
        attention_mask: npt.NDArray[np.int64],
        token_type_ids: npt.NDArray[np.int64],
    ) -> Array:
        """Embeddings, then every encoder layer."""
        width = input_ids.shape[1]
        if width > self.config.max_position_embeddings:
            raise ValueError(f"{width} tokens exceed {self.config.max_position_embeddings}")
        x = (
            self.word_embeddings[input_ids]
            + self._positions[:width]
            + self._token_types[token_type_ids]
        )
        x = layer_norm(x, *self._embedding_norm, self.config.layer_norm_eps)
        score_bias = np.where(attention_mask[:, None, None, :] > 0, np.float32(0), _MASKED)
        for layer in self._layers:
            x = self._layer_forward(layer, x, score_bias)
        return x

    def _layer_forward(self, layer: _Layer, x: Array, score_bias: Array) -> Array:
        batch, width, hidden = x.shape
        heads = self.config.num_attention_heads
        qkv = (x @ layer.qkv_weight + layer.qkv_bias).reshape(batch, width, 3, heads, -1)
        query, key, value = qkv.transpose(2, 0, 3, 1, 4)  # each (B, heads, T, head size)
        scores = query @ key.transpose(0, 1, 3, 2) / np.float32(np.sqrt(query.shape[-1]))
        scores = scores + score_bias
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        context = (weights @ value).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        attended = context @ layer.attention_out_weight + layer.attention_out_bias
        x = layer_norm(attended + x, *layer.attention_norm, self.config.layer_norm_eps)
        inner = self._activation(x @ layer.intermediate_weight + layer.intermediate_bias)
        out = inner @ layer.output_weight + layer.output_bias
        return layer_norm(out + x, *layer.output_norm, self.config.layer_norm_eps)
