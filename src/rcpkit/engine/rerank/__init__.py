"""Rerankers: rescore recalled candidates precisely and narrowly (§3.3 funnel, §7.6).

Interface (`_interfaces`):
    `Reranker` — `method` (§7.6 `colbert` or `cross-encoder`), a pinned `identity`
    (§15.7), and `score(query, passages, checkpoint)` giving one float32 score per
    passage in input order, computed in model batches with `checkpoint()` called
    before each so a cancelled request stops.

Implementations:
    `LateInteractionReranker` — §7.5 MaxSim (raw sum) over any `Embedder`'s unit
    token vectors, with a bounded LRU of passage token matrices; its
    `token_matrices(texts, kind)` also serves `embed/multi`. Over the bundled
    MiniLM it is the real one; over `HashingEmbedder` it is the deterministic one
    for fast tests. It is late interaction by mechanism, not a trained ColBERT.
    `HybridReranker` — the engine's own hybrid scorer (BM25 with the index's
    statistics + cosine, convex-fused as `retrieve` fuses), served as
    `cross-encoder` when no cross-encoder model is configured (issue 33).
    `CrossEncoderReranker` — a `PairScorer` run in length-sorted batches: a
    user-supplied ONNX directory (`model.onnx` + `tokenizer.json`, sha256-checked)
    on onnxruntime, or a sentence-transformers `CrossEncoder` when that is installed.

`load_reranker(spec, embedder)` picks one from a configuration string.
"""

from rcpkit.engine.rerank._cross_encoder import CrossEncoderReranker, PairScorer
from rcpkit.engine.rerank._hybrid import HybridReranker, LexicalStatistics
from rcpkit.engine.rerank._interfaces import (
    RERANK_METHODS,
    Checkpoint,
    Reranker,
    RerankMethod,
    Scores,
)
from rcpkit.engine.rerank._late_interaction import LateInteractionReranker
from rcpkit.engine.rerank._loader import RERANKER_SCHEMES, load_reranker
from rcpkit.engine.rerank._sentence_transformers import SENTENCE_TRANSFORMERS_INSTALL
from rcpkit.engine.rerank._token_cache import TokenCacheInfo

__all__ = [
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
]
