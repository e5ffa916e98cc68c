"""The situating context prepended to a chunk before it is embedded (contextual retrieval)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["contextual_prefix"]

_SEPARATOR = " › "


def contextual_prefix(title: str | None, heading_path: Sequence[str]) -> str:
    """``"Refund policy › Limits\\n"`` from the title and heading path, or ``""``.

    A Markdown document's title is usually also its first heading, so a heading equal
    to the part before it is dropped rather than repeated.
    """
    parts: list[str] = []
    for part in (title or "", *heading_path):
        cleaned = " ".join(part.split())
        if cleaned and (not parts or cleaned != parts[-1]):
            parts.append(cleaned)
    return _SEPARATOR.join(parts) + "\n" if parts else ""
