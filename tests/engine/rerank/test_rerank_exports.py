"""The public surface of rcpkit.engine.rerank is exactly the intended names."""

from __future__ import annotations

import subprocess
import sys

import rcpkit.engine.rerank as rerank


def test_the_rerank_package_exports_exactly_the_intended_names() -> None:
    assert set(rerank.__all__) == {
        "RERANKER_SCHEMES",
        "RERANK_METHODS",
        "SENTENCE_TRANSFORMERS_INSTALL",
        "Checkpoint",
        "CrossEncoderReranker",
        "HybridReranker",
        "LateInteractionReranker",
        "LexicalStatistics",
        "PairScorer",
        "RerankMethod",
        "Reranker",
        "Scores",
        "TokenCacheInfo",
        "load_reranker",
    }
    for name in rerank.__all__:
        assert hasattr(rerank, name), name


def test_the_methods_are_the_two_this_package_implements() -> None:
    assert rerank.RERANK_METHODS == ("colbert", "cross-encoder")


def test_importing_the_package_loads_no_model_runtime() -> None:
    code = (
        "import sys, rcpkit.engine.rerank; print(sorted(m for m in "
        "('onnxruntime', 'tokenizers', 'sentence_transformers', 'torch') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "[]", result.stderr
