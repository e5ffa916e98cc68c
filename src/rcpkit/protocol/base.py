"""The one base class for wire types, and the small value types they share.

All wire types are ``msgspec`` structs: field names are snake_case in Python
and camelCase on the wire, optional fields default to ``None`` and are omitted
when encoding (§4.6: producers omit optional fields rather than send ``null``),
and unknown fields are ignored on decode (§4.6 forward compatibility).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

__all__ = [
    "Count",
    "Encoding",
    "Id",
    "Kind",
    "Meta",
    "Modality",
    "NonNegative",
    "Unit",
    "UnitFloat",
    "Wire",
]


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """Base of every params/result/value struct on the wire."""


# §4.6: integers are JSON numbers with no fractional part; a count is >= 1.
# Booleans and floats are rejected by msgspec's strict integer decoding.
Count = Annotated[int, msgspec.Meta(ge=1)]
NonNegative = Annotated[int, msgspec.Meta(ge=0)]
UnitFloat = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]

# §4.7: a request id is a string or a number, never null or a boolean.
Id = str | int | float
Meta = dict[str, Any]

Modality = Literal["text", "image", "audio", "code", "multimodal"]
Unit = Literal[
    "chunk",
    "passage",
    "document",
    "node",
    "triplet",
    "path",
    "subgraph",
    "community",
    "tree-node",
    "page",
]
Kind = Literal["query", "document"]
Encoding = Literal["json", "f32-base64"]
