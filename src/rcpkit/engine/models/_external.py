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
from collections.abc import Callable, Sequence

import numpy as np

from rcpkit.engine.models._interfaces import EmbedKind, Vectors
from rcpkit.engine.models._vectors import l2_normalize
from rcpkit.protocol.errors import RCPError

__all__ = ["PREFIX", "ExternalVectors", "external_spec", "is_external", "own_vectors"]

PREFIX = "vectors:"
_TOKEN = re.compile(r"\w+|[^\w\s]")


def is_external(identity: str) -> bool:
    """Whether an index's vectors (its recorded identity) are the caller's own."""
    return identity.startswith(PREFIX)


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
        field, whose = (
            ("vector", "the query's") if kind == "query" else ("documents", "each document's")
        )
        raise RCPError.invalid_params(
            field,
            f"this index holds your own vectors ({self._identity}) and embeds no text: "
            f"give {whose} vector",
        )

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        self.embed(texts, kind)
        return []

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_TOKEN.findall(text)) for text in texts]


def own_vectors(
    rows: object, count: int, dimension: int, identity: str, path: Callable[[int], str]
) -> Vectors:
    """``rows`` (a list of lists or a 2-D array) as ``count`` unit-length float32 vectors.

    Cosine similarity compares directions, so each vector is scaled to length 1,
    as the index's own models' are; one that cannot be (a wrong count or
    dimension, a NaN or infinity, all zeros) is -32602 naming it (``path(i)``).
    """
    if isinstance(rows, list | tuple):
        for position, row in enumerate(rows):
            length = len(row) if isinstance(row, list | tuple) else None
            if length is not None and length != dimension:
                raise RCPError.invalid_params(
                    path(position),
                    f"a vector of dimension {length}; this index holds {identity} "
                    f"(dimension {dimension})",
                )
    try:
        matrix = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        raise RCPError.invalid_params(
            path(0), "vectors must be lists of numbers (or a 2-D array), all one length"
        ) from None
    if matrix.ndim == 1 and count == 1 and matrix.size:
        matrix = matrix.reshape(1, -1)
    if matrix.ndim != 2 or matrix.shape[0] != count:
        given = matrix.shape[0] if matrix.ndim == 2 else "not a list of"
        raise RCPError.invalid_params(path(0), f"{given} vectors for {count} documents")
    if matrix.shape[1] != dimension:
        raise RCPError.invalid_params(
            path(0),
            f"vectors of dimension {matrix.shape[1]}; this index holds {identity} "
            f"(dimension {dimension})",
        )
    # Checked as whole arrays, the first bad row named (a row at a time was 10 µs a vector).
    finite = np.asarray(np.isfinite(matrix).all(axis=1))
    bad = ~finite | (np.count_nonzero(matrix, axis=1) == 0)
    if bad.any():
        position = int(np.argmax(bad))
        if not finite[position]:
            raise RCPError.invalid_params(path(position), "the vector has a NaN or infinite value")
        raise RCPError.invalid_params(path(position), "the vector is all zeros (no direction)")
    return l2_normalize(matrix)
