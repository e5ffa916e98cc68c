"""How files become documents, as set in ``rcpkit.toml``'s ``[ingest]`` table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = ["FORMAT_VERSION", "IngestOptions", "TableMode"]

TableMode = Literal["row", "table"]
# Bumped when loaders start producing different text or meta for the same bytes.
FORMAT_VERSION = 2


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """Loader settings; the defaults read BEIR ``corpus.jsonl`` and one document per CSV row."""

    text_field: str = "text"
    """JSON/JSONL: the field holding a record's text."""
    id_field: str = "_id"
    """JSON/JSONL: the field holding a record's id (absent: ``<file>#<line or index>``)."""
    title_field: str = "title"
    """JSON/JSONL: the field holding a record's title."""
    table_mode: TableMode = "row"
    """CSV/TSV: ``row`` makes a document per row, ``table`` one per file."""
    meta_fields: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Front-matter key → ``meta`` field (``{"categories": "tag"}``); unmapped keys keep
    their own name."""
    field_types: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """The index's advertised filter fields: front matter must fit their types."""

    def fingerprint(self) -> bytes:
        """Mixed into every content hash, so changing a setting re-reads every file."""
        settings = (
            FORMAT_VERSION,
            self.text_field,
            self.id_field,
            self.title_field,
            self.table_mode,
            sorted(self.meta_fields.items()),
            sorted(self.field_types.items()),
        )
        return repr(settings).encode()
