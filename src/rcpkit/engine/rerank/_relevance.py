"""Reading one relevance score per pair out of a cross-encoder's logits."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models import ModelLoadError
from rcpkit.engine.rerank._interfaces import Scores

__all__ = ["relevance_scores"]


def relevance_scores(logits: npt.ArrayLike, pairs: int) -> Scores:
    """One float32 score per pair from `(n,)`, `(n, 1)` or `(n, 2)` logits.

    Two columns are a (not relevant, relevant) classifier: the positive-class
    logit is the score. Its difference from the negative logit would rank the
    same only if the negative logit were constant, which it is not.
    """
    array = np.asarray(logits, dtype=np.float32)
    if array.ndim == 2 and array.shape[1] in (1, 2):
        array = array[:, -1]
    if array.shape != (pairs,):
        raise ModelLoadError(
            f"a cross-encoder must output (n,), (n, 1) or (n, 2) logits; got {array.shape} "
            f"for {pairs} pairs"
        )
    return np.ascontiguousarray(array)
