"""Token counters: the callable shape the chunker takes, batching, and a test counter."""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["COUNT_BATCH_SIZE", "TokenCounter", "count_in_batches", "whitespace_token_counter"]

TokenCounter = Callable[[Sequence[str]], list[int]]
"""Tokens per text, as an embedding model's tokenizer counts them (batch in, batch out)."""

COUNT_BATCH_SIZE = 4096


def whitespace_token_counter(texts: Sequence[str]) -> list[int]:
    """A deterministic stand-in for a subword tokenizer, for tests: 1.3 tokens a word.

    Rounded up, in integer arithmetic so that 10 words are 13 tokens and not 14.
    """
    return [(len(text.split()) * 13 + 9) // 10 for text in texts]


def count_in_batches(count_tokens: TokenCounter, texts: Sequence[str]) -> list[int]:
    """``count_tokens`` over ``texts`` in bounded batches, checking it answered each one."""
    counts: list[int] = []
    for offset in range(0, len(texts), COUNT_BATCH_SIZE):
        batch = texts[offset : offset + COUNT_BATCH_SIZE]
        answered = count_tokens(batch)
        if len(answered) != len(batch):
            raise ValueError(f"count_tokens returned {len(answered)} counts for {len(batch)}")
        counts.extend(answered)
    return counts
