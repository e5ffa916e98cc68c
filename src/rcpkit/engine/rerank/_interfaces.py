"""The one interface every reranker sits behind (§7.6), and the types it trades in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["RERANK_METHODS", "Checkpoint", "RerankMethod", "Reranker", "Scores"]

#: §7.6 `method` values this package implements (`llm` is not one of them).
RerankMethod = Literal["colbert", "cross-encoder"]
RERANK_METHODS: Final[tuple[RerankMethod, ...]] = ("colbert", "cross-encoder")

#: Called between model batches; it raises (the request's cancel or deadline) to stop.
Checkpoint = Callable[[], None]

#: One float32 score per passage, in the caller's order.
Scores = npt.NDArray[np.float32]


@runtime_checkable
class Reranker(Protocol):
    """Rescores candidate passages against a query, precisely and narrowly (§3.3, §7.6)."""

    @property
    def method(self) -> RerankMethod:
        """The §7.6 `method` this reranker answers, advertised in `rerank.methods`."""
        ...

    @property
    def identity(self) -> str:
        """Pinned model identity (§15.7): a model swap changes every score."""
        ...

    def score(
        self, query: str, passages: Sequence[str], checkpoint: Checkpoint | None = None
    ) -> Scores:
        """`scores[i]` rates `passages[i]`; higher is more relevant (§7.6).

        Scores are only monotonic within one call (§4.6), never a fixed range.
        The model is called in batches, with `checkpoint()` before each one, so
        a cancelled request stops between batches and the exception propagates.
        """
        ...
