"""A tenant's corpus vocabulary, asked for only as far as the caller needs it (issue 48).

Query rewriting (§7.7 ``rewrite``, §7.8) builds a spelling index over the most
frequent surface words and needs the document frequency of a few others (the
query's, the feedback passages'); ``memory/build`` needs the frequencies of its
texts' words. An embedded or PostgreSQL store keeps its vocabulary in one table
and reads it whole (one query, as before); a SolrCloud computes it by faceting
over every chunk, so it is asked for the words wanted and no more
(``rcpkit.engine.store.solr.vocabulary``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from rcpkit.engine.store.base import Store

__all__ = ["Frequent", "Vocabulary", "WholeVocabulary"]


@dataclass(frozen=True, slots=True)
class Frequent:
    """A tenant's most frequent words with their document frequencies."""

    words: list[tuple[str, int]]
    # Every word of the tenant's live chunks is listed: one that is not has df 0.
    complete: bool


class Vocabulary(Protocol):
    def frequent(self, limit: int, tenant: str | None = None) -> Frequent:
        """At least the ``limit`` highest-df words (all of them when that is as cheap)."""
        ...

    def frequencies(self, words: Collection[str], tenant: str | None = None) -> dict[str, int]:
        """The df of each of ``words`` the tenant's live chunks hold; absent words left out."""
        ...


class WholeVocabulary:
    """A store's vocabulary read whole (a table the SQLite and PostgreSQL stores keep)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def frequent(self, limit: int, tenant: str | None = None) -> Frequent:
        return Frequent(self._store.vocabulary(tenant), complete=True)

    def frequencies(self, words: Collection[str], tenant: str | None = None) -> dict[str, int]:
        wanted = set(words)
        return {word: df for word, df in self._store.vocabulary(tenant) if word in wanted}
