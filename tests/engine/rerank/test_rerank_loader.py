"""Choosing a reranker from a configuration string."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from rerank_support import build_tiny_cross_encoder

from rcpkit.engine.models import HashingEmbedder, ModelIntegrityError, ModelLoadError
from rcpkit.engine.rerank import (
    RERANKER_SCHEMES,
    CrossEncoderReranker,
    LateInteractionReranker,
    load_reranker,
)

EMBEDDER = HashingEmbedder(32)


@pytest.fixture(scope="module")
def tiny_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("loader") / "tiny").directory


@pytest.mark.parametrize("spec", [None, "colbert", "maxsim"])
def test_no_spec_colbert_or_maxsim_give_maxsim_over_the_embedder(spec: str | None) -> None:
    reranker = load_reranker(spec, EMBEDDER)
    assert isinstance(reranker, LateInteractionReranker)
    assert reranker.identity == "maxsim:rcpkit-hashing-v1:32"


def test_maxsim_options_reach_the_reranker() -> None:
    reranker = load_reranker("colbert", EMBEDDER, cache_size=0)
    assert isinstance(reranker, LateInteractionReranker)
    reranker.score("q", ["a passage"])
    assert reranker.cache_info().entries == 0


def test_a_directory_or_onnx_prefix_gives_the_cross_encoder(tiny_directory: Path) -> None:
    for spec in (str(tiny_directory), f"onnx:{tiny_directory}"):
        reranker = load_reranker(spec, EMBEDDER, threads=1)
        assert isinstance(reranker, CrossEncoderReranker)
        assert reranker.identity.startswith("tiny@onnx:sha256:")


def test_the_expected_sha256_pins_the_directorys_model(tiny_directory: Path) -> None:
    digest = hashlib.sha256((tiny_directory / "model.onnx").read_bytes()).hexdigest()
    assert load_reranker(str(tiny_directory), EMBEDDER, expected_sha256=digest).identity.endswith(
        digest[:12]
    )
    with pytest.raises(ModelIntegrityError):
        load_reranker(str(tiny_directory), EMBEDDER, expected_sha256="f" * 64)


def test_an_st_spec_asks_sentence_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ModelLoadError, match="pip install sentence-transformers"):
        load_reranker("st:cross-encoder/ms-marco-MiniLM-L-6-v2", EMBEDDER)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bge-reranker", "unknown reranker"),
        ("/nonexistent/reranker/dir", "unknown reranker"),
        ("st:", "st:<model"),
        ("colbert:v2", "no argument"),
    ],
)
def test_a_bad_spec_is_a_clear_error(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_reranker(spec, EMBEDDER)


def test_an_onnx_spec_naming_no_directory_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not a model directory"):
        load_reranker(f"onnx:{tmp_path / 'absent'}", EMBEDDER)


def test_the_registered_schemes_are_the_documented_ones() -> None:
    assert set(RERANKER_SCHEMES) == {"colbert", "maxsim", "onnx", "st"}
