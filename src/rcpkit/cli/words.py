"""Counts in what the CLI prints: ``1 document``, ``2 documents`` (never ``1 documents``)."""

from __future__ import annotations

__all__ = ["counted"]

_IRREGULAR = {"query": "queries"}


def counted(count: int, noun: str, width: int = 0) -> str:
    """``count`` and ``noun``, plural unless it is 1; ``width`` right-aligns the number.

    >>> counted(1, "document"), counted(3, "query"), counted(12, "chunk", 4)
    ('1 document', '3 queries', '  12 chunks')
    """
    word = noun if count == 1 else _IRREGULAR.get(noun, f"{noun}s")
    return f"{count:>{width}} {word}"
