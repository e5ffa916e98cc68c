"""Content blocks (§4.8) and the Hit (§7.7) with its citation, trust and provenance."""

from __future__ import annotations

from typing import Literal

from rcpkit.protocol.base import Count, Id, Meta, Modality, NonNegative, Unit, UnitFloat, Wire

__all__ = [
    "Chunk",
    "Citation",
    "Content",
    "Edge",
    "Hit",
    "Provenance",
    "QueryInput",
    "TextInput",
    "Trust",
    "text_of",
]


class Content(Wire):
    """§4.8: a tagged content block; inline ``data`` xor ``uri``, ``mimeType`` for non-text."""

    type: Literal["text", "image", "audio", "blob"]
    text: str | None = None
    mime_type: str | None = None
    data: str | None = None
    uri: str | None = None

    def __post_init__(self) -> None:
        if self.type == "text":
            if self.text is None:
                raise ValueError("a text block carries `text`")
            return
        if self.mime_type is None:
            raise ValueError("a non-text block needs `mimeType`")
        if (self.data is None) == (self.uri is None):
            raise ValueError("a block carries exactly one of `data` or `uri`")


# §4.8: a bare string is exactly equivalent to one text block.
QueryInput = str | Content | list[Content]
TextInput = str | Content


def text_of(value: QueryInput) -> str:
    """The text of a query/passage given as a string, a text block or blocks.

    Only text blocks contribute; callers gate non-text blocks by modality first.
    """
    if isinstance(value, str):
        return value
    blocks = [value] if isinstance(value, Content) else value
    return "\n".join(block.text for block in blocks if block.text is not None)


class Citation(Wire):
    source: str
    uri: str | None = None
    title: str | None = None
    start: NonNegative | None = None
    end: NonNegative | None = None
    page: Count | None = None


class Trust(Wire):
    level: Literal["trusted", "community", "untrusted"]
    score: UnitFloat | None = None
    injection_suspected: bool | None = None
    sanitized: bool | None = None


class Edge(Wire):
    src: str
    dst: str
    weight: float | None = None


class Provenance(Wire):
    path: list[str] | None = None
    nodes: list[str] | None = None
    edges: list[Edge] | None = None
    leaves: list[str] | None = None


class Chunk(Wire):
    doc_id: str
    index: NonNegative
    context: str | None = None


class Hit(Wire):
    """§7.7: one ranked result."""

    id: Id
    score: float
    confidence: UnitFloat | None = None
    text: str | None = None
    content: list[Content] | None = None
    modality: Modality | None = None
    unit: Unit | None = None
    level: NonNegative | None = None
    meta: Meta | None = None
    vector: list[float] | str | None = None
    scores: dict[str, float] | None = None
    citation: Citation | None = None
    provenance: Provenance | None = None
    trust: Trust | None = None
    chunk: Chunk | None = None
