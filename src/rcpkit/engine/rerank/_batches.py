"""Fixed-size batches with a cancellation checkpoint before each one."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from rcpkit.engine.rerank._interfaces import Checkpoint

__all__ = ["checked_batches"]

T = TypeVar("T")


def checked_batches(
    items: Sequence[T], batch_size: int, checkpoint: Checkpoint | None
) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most `batch_size` items; `checkpoint()` runs before each.

    Checking before the first batch too means a request cancelled while it
    waited for a worker thread never reaches the model.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    for start in range(0, len(items), batch_size):
        if checkpoint is not None:
            checkpoint()
        yield items[start : start + batch_size]
