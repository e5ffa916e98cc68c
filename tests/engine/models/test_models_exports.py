"""The public surface of rcpkit.engine.models is exactly the intended names."""

from __future__ import annotations

import rcpkit.engine.models as models


def test_the_models_package_exports_exactly_the_intended_names() -> None:
    assert set(models.__all__) == {
        "EMBED_KINDS",
        "MINILM_INSTALL",
        "SPLADE_INSTALL",
        "EmbedKind",
        "Embedder",
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
        "encode_f32_base64",
        "l2_normalize",
        "load_embedder",
        "load_minilm",
        "load_sparse_encoder",
        "load_splade_tiny",
        "maxsim",
        "maxsim_many",
        # Building blocks the rerankers reuse (no reaching into private modules).
        "open_tokenizer",
        "read_max_tokens",
        "session_options",
        "verify_sha256",
        # Your own vectors (issue 47): the index's stand-in embedder and their checks.
        "ExternalVectors",
        "embedder_spec",
        "is_external",
        "own_vectors",
    }
    for name in models.__all__:
        assert hasattr(models, name), name


def test_every_implementation_satisfies_its_protocol() -> None:
    assert isinstance(models.HashingEmbedder(), models.Embedder)
    assert isinstance(models.HashingSparseEncoder(), models.SparseEncoder)


def test_importing_the_package_does_not_load_onnxruntime_or_the_splade_package() -> None:
    import subprocess
    import sys

    code = (
        "import sys, rcpkit.engine.models; "
        "print(sorted(m for m in ('onnxruntime', 'cognition', 'torch') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr
