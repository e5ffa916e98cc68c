"""Analysed chunk bodies for the feedback pass and the proximity stage: the index's, if it has them.

Both stages need a candidate's body as analysed terms (``stored_terms``), and
analysing one costs about 55 µs (Cranfield's 170-word abstracts: the word regex
and Snowball), ~2.5 ms for the proximity stage's 30 when none is remembered
yet, as in a collection larger than the memo. The embedded store's FTS table
holds each chunk's body exactly as the indexer analysed it, so the bodies not
remembered yet are read from it in one statement (~0.25 ms for 30) and
remembered; a store that keeps no order of terms (PostgreSQL's postings hold
counts) returns none, and those are analysed as before.
"""

from __future__ import annotations

from collections.abc import Mapping

from rcpkit.engine.store.base import ChunkRow, Store
from rcpkit.engine.text.analysis import remember_terms, remembers

__all__ = ["is_code", "remember_bodies"]


def remember_bodies(store: Store, rows: Mapping[int, ChunkRow]) -> None:
    """Have ``stored_terms`` hold each row's body terms, read from ``store`` where it keeps them.

    The index analysed a code row as code (identifier-aware) and any other as
    prose, and so do both stages.
    """
    wanted = [key for key, row in rows.items() if not remembers(row.text, is_code(row))]
    if not wanted:
        return
    for key, body in store.body_terms(wanted).items():
        row = rows[key]
        remember_terms(row.text, is_code(row), body.split())


def is_code(row: ChunkRow) -> bool:
    """Whether the index analysed ``row``'s body as code (identifier-aware)."""
    return row.modality == "code"
