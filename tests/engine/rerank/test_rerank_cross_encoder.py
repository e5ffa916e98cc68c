"""The ONNX cross-encoder plumbing (§7.6 `cross-encoder`), on a tiny graph built here."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest
from rerank_support import (
    VOCABULARY,
    TinyCrossEncoder,
    build_tiny_cross_encoder,
    write_tiny_tokenizer,
)

from rcpkit.engine.models import ModelIntegrityError, ModelLoadError
from rcpkit.engine.rerank import SENTENCE_TRANSFORMERS_INSTALL, CrossEncoderReranker
from rcpkit.engine.rerank._onnx_pair_scorer import OnnxPairScorer
from rcpkit.engine.rerank._pair_tokenizer import PairTokenizer
from rcpkit.engine.rerank._relevance import relevance_scores

QUERY = "red cat"
PASSAGES = ["the cat sat on the mat", "dog", "", "big blue dog ran in the park", "red cat"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyCrossEncoder:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("cross") / "tiny-ce")


def _load(
    directory: Path, *, max_tokens: int | None = None, batch_size: int = 16
) -> CrossEncoderReranker:
    return CrossEncoderReranker.from_onnx_directory(
        directory, threads=1, max_tokens=max_tokens, batch_size=batch_size
    )


def _expected(model: TinyCrossEncoder, column: int = 0) -> list[float]:
    return [float(model.reference_logits(QUERY, passage)[column]) for passage in PASSAGES]


def test_scores_equal_a_numpy_recomputation_of_the_graph(tiny: TinyCrossEncoder) -> None:
    scores = _load(tiny.directory, batch_size=2).score(QUERY, PASSAGES)
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores, _expected(tiny), rtol=1e-5, atol=1e-6)


def test_pairs_are_cls_query_sep_passage_sep_with_passage_tokens_typed_1(
    tiny: TinyCrossEncoder,
) -> None:
    batch = PairTokenizer(tiny.directory / "tokenizer.json", 512).encode("Red cat", ["dog", ""])
    v = VOCABULARY
    assert batch.input_ids.tolist() == [
        [v["[CLS]"], v["red"], v["cat"], v["[SEP]"], v["dog"], v["[SEP]"]],
        [v["[CLS]"], v["red"], v["cat"], v["[SEP]"], v["[SEP]"], v["[PAD]"]],
    ]
    assert batch.token_type_ids.tolist() == [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 1, 0]]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]]


def test_pairs_are_padded_per_batch_not_to_the_files_fixed_length(tiny: TinyCrossEncoder) -> None:
    batch = PairTokenizer(tiny.directory / "tokenizer.json", 512).encode("cat", ["dog"])
    assert batch.input_ids.shape == (1, 5), "tokenizer.json pins padding to 64"


def test_long_pairs_are_truncated_to_the_model_length_passage_first(tiny: TinyCrossEncoder) -> None:
    tokenizer = PairTokenizer(tiny.directory / "tokenizer.json", max_tokens=12)
    batch = tokenizer.encode("red cat sat", ["dog " * 50])
    assert batch.input_ids.shape == (1, 12)
    assert batch.token_type_ids.tolist() == [[0] * 5 + [1] * 7], "a short query is kept whole"
    assert batch.input_ids[0, -1] == VOCABULARY["[SEP]"]


def test_the_model_length_defaults_to_the_tokenizer_files_truncation(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "truncating")
    write_tiny_tokenizer(model.directory / "tokenizer.json", max_length=10)
    default, explicit = _load(model.directory).scorer, _load(model.directory, max_tokens=7).scorer
    assert isinstance(default, OnnxPairScorer)
    assert isinstance(explicit, OnnxPairScorer)
    assert (default.max_tokens, explicit.max_tokens) == (10, 7)


def test_a_graph_without_token_type_ids_is_fed_without_them(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "no-types", token_types=False)
    scores = _load(model.directory).score(QUERY, PASSAGES)
    np.testing.assert_allclose(scores, _expected(model), rtol=1e-5, atol=1e-6)


def test_a_two_logit_output_scores_the_positive_class(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "two-class", labels=2)
    scores = _load(model.directory).score(QUERY, PASSAGES)
    np.testing.assert_allclose(scores, _expected(model, column=1), rtol=1e-5, atol=1e-6)


def test_a_one_dimensional_logit_output_is_accepted(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "squeezed", squeeze=True)
    scores = _load(model.directory).score(QUERY, PASSAGES)
    np.testing.assert_allclose(scores, _expected(model), rtol=1e-5, atol=1e-6)


def test_a_graph_with_three_logits_fails_at_load(tmp_path: Path) -> None:
    model = build_tiny_cross_encoder(tmp_path / "three-class", labels=3)
    with pytest.raises(ModelLoadError, match=r"\(n, 2\)"):
        _load(model.directory)


@pytest.mark.parametrize(
    ("logits", "expected"),
    [
        ([1.0, 2.0], [1.0, 2.0]),
        ([[1.0], [2.0]], [1.0, 2.0]),
        ([[5.0, 1.0], [0.0, 3.0]], [1.0, 3.0]),
    ],
)
def test_relevance_reads_n_or_n1_or_the_positive_column_of_n2(
    logits: list[float], expected: list[float]
) -> None:
    assert relevance_scores(logits, 2).tolist() == expected


def test_a_scorer_returning_the_wrong_count_is_an_error() -> None:
    with pytest.raises(ModelLoadError, match="3 pairs"):
        relevance_scores([1.0, 2.0], 3)


def test_the_identity_is_directory_onnx_and_12_hex_of_the_model_sha256(
    tiny: TinyCrossEncoder,
) -> None:
    digest = hashlib.sha256((tiny.directory / "model.onnx").read_bytes()).hexdigest()
    reranker = _load(tiny.directory)
    assert reranker.identity == f"tiny-ce@onnx:sha256:{digest[:12]}"
    assert reranker.method == "cross-encoder"


def test_a_matching_sha256_loads_and_a_mismatch_refuses_to(tiny: TinyCrossEncoder) -> None:
    digest = hashlib.sha256((tiny.directory / "model.onnx").read_bytes()).hexdigest()
    CrossEncoderReranker.from_onnx_directory(tiny.directory, expected_sha256=digest.upper())
    with pytest.raises(ModelIntegrityError, match="refusing to load"):
        CrossEncoderReranker.from_onnx_directory(tiny.directory, expected_sha256="0" * 64)


def test_a_pinned_tokenizer_sha256_is_checked_too(tiny: TinyCrossEncoder) -> None:
    with pytest.raises(ModelIntegrityError, match=r"tokenizer\.json"):
        CrossEncoderReranker.from_onnx_directory(tiny.directory, tokenizer_sha256="0" * 64)


def test_a_directory_without_model_files_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        CrossEncoderReranker.from_onnx_directory(tmp_path)
    with pytest.raises(ModelLoadError, match="not a model directory"):
        CrossEncoderReranker.from_onnx_directory(tmp_path / "absent")


def test_a_graph_without_the_cross_encoder_inputs_is_a_load_error(
    tiny: TinyCrossEncoder, tmp_path: Path
) -> None:
    onnx = pytest.importorskip("onnx", reason="building the test model needs `pip install onnx`")
    proto = onnx.load(str(tiny.directory / "model.onnx"))
    # attention_mask renamed: the graph no longer has the inputs a cross-encoder is fed.
    proto.graph.input[1].name = "attention"
    for node in proto.graph.node:
        node.input[:] = ["attention" if name == "attention_mask" else name for name in node.input]
    directory = tmp_path / "renamed"
    directory.mkdir()
    onnx.save(proto, str(directory / "model.onnx"))
    (directory / "tokenizer.json").write_bytes((tiny.directory / "tokenizer.json").read_bytes())
    with pytest.raises(ModelLoadError, match="attention_mask"):
        _load(directory)


def test_a_file_onnxruntime_cannot_read_is_a_load_error(
    tiny: TinyCrossEncoder, tmp_path: Path
) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    (tmp_path / "tokenizer.json").write_bytes((tiny.directory / "tokenizer.json").read_bytes())
    with pytest.raises(ModelLoadError, match="onnxruntime cannot load"):
        _load(tmp_path)


def test_sentence_transformers_without_the_package_is_a_clear_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes the import fail even where the package is installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ModelLoadError, match=SENTENCE_TRANSFORMERS_INSTALL) as raised:
        CrossEncoderReranker.from_sentence_transformers("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert "model.onnx" in str(raised.value), "it names the torch-free alternative"
    assert isinstance(raised.value.__cause__, ImportError)
