"""The small interfaces every model sits behind, and the array types they trade in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = [
    "EMBED_KINDS",
    "EmbedKind",
    "Embedder",
    "SparseEncoder",
    "SparseVector",
    "Vectors",
    "check_kind",
]

#: §7.3/§7.4/§7.5: `kind` selects query- or document-side encoding.
EmbedKind = Literal["query", "document"]
EMBED_KINDS: Final[tuple[EmbedKind, ...]] = ("query", "document")

#: A float32 matrix, one row per vector: `(n, dimension)`.
Vectors = npt.NDArray[np.float32]


class SparseVector(NamedTuple):
    """§7.4: one learned-sparse vector over a vocabulary, indices ascending."""

    indices: npt.NDArray[np.int64]
    values: npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Dense text→vector model (§7.3) that also yields per-token vectors (§7.5)."""

    @property
    def dimension(self) -> int:
        """Length of every vector this model returns."""
        ...

    @property
    def identity(self) -> str:
        """Pinned model identity, advertised as `embed.identity` (§15.7)."""
        ...

    @property
    def max_tokens(self) -> int:
        """Model input length in tokens; longer inputs are truncated."""
        ...

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> Vectors:
        """One L2-normalised row per text, in input order: shape `(len(texts), dimension)`."""
        ...

    def embed_tokens(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[Vectors]:
        """One `(tokens, dimension)` matrix of L2-normalised token vectors per text."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each whole text (untruncated, no special tokens), for budgets."""
        ...


@runtime_checkable
class SparseEncoder(Protocol):
    """Learned-sparse text→term-weight model (§7.4)."""

    @property
    def identity(self) -> str:
        """Pinned model identity, advertised as `sparseEmbed.identity`."""
        ...

    @property
    def vocabulary_size(self) -> int:
        """Number of vocabulary ids; every index is below it."""
        ...

    def encode(self, texts: Sequence[str], kind: EmbedKind = "document") -> list[SparseVector]:
        """One sparse vector with non-negative weights per text, in input order."""
        ...


def check_kind(kind: str) -> EmbedKind:
    """Return `kind` if it is a §7.3 kind, else raise ValueError."""
    if kind == "query":
        return "query"
    if kind == "document":
        return "document"
    raise ValueError(f"kind must be 'query' or 'document', not {kind!r}")
