"""Choosing a model from a configuration string."""

from __future__ import annotations

from pathlib import Path

import pytest
from models_support import bundled_splade

from rcpkit.engine.models import (
    HashingEmbedder,
    HashingSparseEncoder,
    ModelLoadError,
    SpladeEncoder,
    TransformerEmbedder,
    load_embedder,
    load_sparse_encoder,
)
from rcpkit.engine.models._bundled import splade_tiny_directory


@pytest.fixture
def splade() -> SpladeEncoder:
    return bundled_splade()


def test_no_spec_or_minilm_loads_the_bundled_minilm() -> None:
    for spec in (None, "minilm"):
        embedder = load_embedder(spec, threads=1)
        assert isinstance(embedder, TransformerEmbedder)
        assert embedder.identity.startswith("sentence-transformers/all-MiniLM-L6-v2@int8-onnx")


def test_a_hashing_spec_names_its_dimension() -> None:
    embedder = load_embedder("hashing:96")
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.dimension == 96
    assert load_embedder("hashing").dimension == 256


@pytest.mark.parametrize("spec", ["hashing:wide", "bert-base", "/nonexistent/model/dir"])
def test_an_unknown_embedder_spec_is_a_clear_error(spec: str) -> None:
    with pytest.raises(ValueError, match="hashing"):
        load_embedder(spec)


def test_a_directory_without_model_files_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        load_embedder(str(tmp_path))


def test_sparse_specs_select_hashing_or_splade(splade: SpladeEncoder) -> None:
    hashing = load_sparse_encoder("hashing:1024")
    assert isinstance(hashing, HashingSparseEncoder)
    assert hashing.vocabulary_size == 1024
    assert load_sparse_encoder().identity == splade.identity
    from_directory = load_sparse_encoder(str(splade_tiny_directory()))
    assert from_directory.identity == "model@safetensors:sha256:96e1dd8dbbc8"
    with pytest.raises(ValueError, match="splade-tiny"):
        load_sparse_encoder("splade-huge")
