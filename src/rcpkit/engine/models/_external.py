"""Your own vectors: an index whose vectors the caller computes; it embeds nothing.

``vectors:<dimension>`` or ``vectors:<name>:<dimension>`` (``vectors:openai/
text-embedding-3-small:1536``) names such an index's vectors; the name is its
identity (§15.7), so the index refuses vectors of another model or dimension.
Documents arrive with their vector and queries with theirs; asking it to embed
a text is an error that says so. Tokens are counted as words and punctuation,
for chunk sizes and token budgets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rcpkit.engine.models._interfaces import EmbedKind, Vectors
from rcpkit.protocol.errors import RCPError

__all__ = ["PREFIX", "ExternalVectors", "external_spec"]

PREFIX = "vectors:"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def external_spec(spec: str) -> tuple[str | None, int] | None:
    """``(name, dimension)`` of a ``vectors:[name:]dimension`` spec; None for another spec."""
    if not spec.startswith(PREFIX):
        return None
    name, _, size = spec[len(PREFIX) :].rpartition(":")
    if not size.isdigit() or int(size) < 1:
        raise ValueError(
            f"expected 'vectors:<dimension>' or 'vectors:<name>:<dimension>', got {spec!r}"
        )
    return (name or None), int(size)


class ExternalVectors:
    """The :class:`~rcpkit.engine.models.Embedder` of an index of your own vectors."""

    max_tokens = 8192  # nothing is truncated: the caller's model already read the text

    def __init__(self, dimension: int, name: str | None = None) -> None:
        self._dimension = dimension
        self._identity = f"{PREFIX}{name}:{dimension}" if name else f"{PREFIX}{dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def identity(self) -> str:
        return self._identity

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        field = "vector" if kind == "query" else "documents[].vector"
        raise RCPError.invalid_params(
            field,
            f"this index holds your own vectors ({self._identity}) and embeds no text: "
            f"give the {'query' if kind == 'query' else 'documents'}' vector",
        )

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        self.embed(texts, kind)
        return []

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_TOKEN.findall(text)) for text in texts]
