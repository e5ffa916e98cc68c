"""Shared helpers for the rerank tests: the real MiniLM, counting wrappers, a tiny ONNX model.

Not a conftest.py: other test packages import `conftest` by module name, and
a second conftest.py on sys.path would shadow theirs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rcpkit.engine.models import Embedder, EmbedKind, TransformerEmbedder, Vectors, load_minilm
from rcpkit.engine.rerank import Scores

WORDS = ("cat", "dog", "sat", "mat", "ran", "park", "red", "blue", "big", "small")
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
VOCABULARY = {token: i for i, token in enumerate(SPECIAL + WORDS)}
HIDDEN = 6


@functools.cache
def bundled_minilm() -> TransformerEmbedder:
    """The real MiniLM, loaded once per test process."""
    return load_minilm(threads=2)


@dataclass
class CountingEmbedder:
    """An `Embedder` that records every `embed_tokens` call it forwards."""

    inner: Embedder
    calls: list[tuple[EmbedKind, list[str]]] = field(default_factory=list)

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        return self.inner.embed(texts, kind)

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        self.calls.append((kind, list(texts)))
        return self.inner.embed_tokens(texts, kind)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)

    def documents_embedded(self) -> list[str]:
        """Every passage text sent to the model, in call order."""
        return [text for kind, texts in self.calls if kind == "document" for text in texts]


@dataclass
class CountingScorer:
    """A `PairScorer` that records the passages of every batch it forwards."""

    inner: Any
    batches: list[list[str]] = field(default_factory=list)

    @property
    def identity(self) -> str:
        return str(self.inner.identity)

    def score_pairs(self, query: str, passages: Sequence[str]) -> Scores:
        self.batches.append(list(passages))
        scores: Scores = self.inner.score_pairs(query, passages)
        return scores


class RaiseOnCall:
    """A checkpoint that raises on its `n`-th call, as a cancelled request's would."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        if self.calls >= self.n:
            raise CancelledByTest


class CancelledByTest(Exception):
    """Stands for the server's cancellation error."""


def write_tiny_tokenizer(path: Path, max_length: int | None = None) -> None:
    """A lower-casing WordLevel tokenizer with BERT's pair template."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(VOCABULARY, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCABULARY["[CLS]"]), ("[SEP]", VOCABULARY["[SEP]"])],
    )
    # A fixed padding length like real tokenizer.json files pin; the loader must undo it.
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=64)
    if max_length is not None:
        tokenizer.enable_truncation(max_length=max_length)
    tokenizer.save(str(path))


@dataclass(frozen=True)
class TinyCrossEncoder:
    """Weights of the tiny graph: mean of (token + type embedding) over the mask, then linear."""

    directory: Path
    embeddings: np.ndarray
    type_embeddings: np.ndarray
    weights: np.ndarray
    bias: np.ndarray
    token_types: bool

    def reference_logits(self, query: str, passage: str) -> np.ndarray:
        """The graph recomputed in numpy for one pair, tokenized alone and unpadded."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        tokenizer.no_padding()
        encoding = tokenizer.encode(query, passage)
        hidden = self.embeddings[encoding.ids]
        if self.token_types:
            hidden = hidden + self.type_embeddings[encoding.type_ids]
        result: np.ndarray = hidden.mean(axis=0) @ self.weights + self.bias
        return result


def build_tiny_cross_encoder(
    directory: Path,
    *,
    labels: int = 1,
    squeeze: bool = False,
    token_types: bool = True,
    seed: int = 0,
) -> TinyCrossEncoder:
    """Write `model.onnx` and `tokenizer.json` for a tiny cross-encoder into `directory`."""
    onnx = pytest.importorskip("onnx", reason="building the test model needs `pip install onnx`")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    model = TinyCrossEncoder(
        directory,
        rng.standard_normal((len(VOCABULARY), HIDDEN)).astype(np.float32),
        rng.standard_normal((2, HIDDEN)).astype(np.float32),
        rng.standard_normal((HIDDEN, labels)).astype(np.float32),
        rng.standard_normal(labels).astype(np.float32),
        token_types,
    )
    initializers = [
        numpy_helper.from_array(model.embeddings, "E"),
        numpy_helper.from_array(model.type_embeddings, "T"),
        numpy_helper.from_array(model.weights, "W"),
        numpy_helper.from_array(model.bias, "b"),
        numpy_helper.from_array(np.array([-1], np.int64), "last_axis"),
        numpy_helper.from_array(np.array([1], np.int64), "sequence_axis"),
    ]
    nodes = [helper.make_node("Gather", ["E", "input_ids"], ["tokens"])]
    if token_types:
        nodes += [
            helper.make_node("Gather", ["T", "token_type_ids"], ["types"]),
            helper.make_node("Add", ["tokens", "types"], ["hidden"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["tokens"], ["hidden"]))
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
        helper.make_node("Mul", ["hidden", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "sequence_axis"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "sequence_axis"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "W"], ["projected"]),
        helper.make_node("Add", ["projected", "b"], ["linear" if squeeze else "logits"]),
    ]
    if squeeze:
        nodes.append(helper.make_node("Squeeze", ["linear", "sequence_axis"], ["logits"]))
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if token_types else [])
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["n", "L"]) for n in names]
    shape: list[str | int] = ["n"] if squeeze else ["n", labels]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, shape)]
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, outputs, initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    onnx.checker.check_model(proto)
    directory.mkdir(parents=True, exist_ok=True)
    onnx.save(proto, str(directory / "model.onnx"))
    write_tiny_tokenizer(directory / "tokenizer.json")
    return model
