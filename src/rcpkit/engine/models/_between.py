"""One embedding request, length-sorted as a whole, with a checkpoint between batches.

Issue 51: ``index/add`` handed the embedder 64 texts a call (its cancellation
checkpoints), so each call was length-sorted and padded on its own and ended on a
barrier, where one call of the whole request is sorted once, as ``rcpkit index``
and the raw embedder are. An embedder that checks ``between`` itself takes the
whole request; any other is called in steps, ``between`` before each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rcpkit.engine.models._interfaces import Embedder, EmbedKind, Vectors
from rcpkit.engine.models._transformer_embedder import Between, TransformerEmbedder

__all__ = ["embed_between"]

_STEP = 64  # texts per call for an embedder that cannot check between its own batches


def embed_between(
    embedder: Embedder, texts: Sequence[str], kind: EmbedKind, between: Between
) -> Vectors:
    """``embedder.embed(texts, kind)``, calling ``between(done)`` before each batch."""
    if isinstance(embedder, TransformerEmbedder):
        return embedder.embed(texts, kind, between=between)
    parts = []
    for start in range(0, len(texts), _STEP):
        between(start)
        parts.append(embedder.embed(texts[start : start + _STEP], kind))
    return np.concatenate(parts) if parts else embedder.embed([], kind)
