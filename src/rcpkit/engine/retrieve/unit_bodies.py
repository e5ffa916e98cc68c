"""§7.7.2 long units: a `document` or `page` hit is that span of its document, verbatim.

A document's chunks overlap by design (``chunk_overlap_tokens``), so their texts
joined repeat every overlap: a 22,289-character document came back as 26,161
characters, and its citation was one chunk's span. The store keeps each
document's own text, the text every chunk's offsets index; a unit's body is read
from it, so it holds each character once and its citation's ``start``/``end``
(§7.7 Hit.citation) are the exact span of the document it is.
"""

from __future__ import annotations

from collections.abc import Sequence

from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.store.base import ChunkRow, DocumentRow, Store

__all__ = ["with_unit_bodies"]


def with_unit_bodies(
    store: Store, page: Sequence[Candidate], rows: dict[int, ChunkRow], unit: str
) -> list[Candidate]:
    """The page, each candidate's ``text`` and ``span`` set to its unit's body, in place.

    A candidate stands for its unit by the chunk that ranked it; the document
    is the very row that chunk was cut from, at its version (§7.7.1).
    """
    documents = store.documents_of([candidate.key for candidate in page])
    kept = []
    for candidate in page:
        document = documents.get(candidate.key)
        if document is None or candidate.key not in rows:
            continue  # collected since recall, as a chunk would be
        candidate.span = _span(document, rows[candidate.key], unit)
        candidate.text = document.text[candidate.span[0] : candidate.span[1]]
        kept.append(candidate)
    return kept


def _span(document: DocumentRow, row: ChunkRow, unit: str) -> tuple[int, int]:
    if unit == "page" and row.page:
        for page, start, end in document.pages or []:
            if page == row.page:
                return start, end
    # A document unit, or a page the document does not delimit: the whole document.
    return 0, len(document.text)
