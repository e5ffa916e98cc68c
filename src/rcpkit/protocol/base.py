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
    "MAX_CURSOR_LENGTH",
    "MAX_ID_LENGTH",
    "MAX_KEPT_TEXT_LENGTH",
    "MAX_TOKEN_LENGTH",
    "Count",
    "Cursor",
    "DocumentId",
    "Encoding",
    "Id",
    "KeptText",
    "Kind",
    "Meta",
    "Modality",
    "NonNegative",
    "Token",
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

# §15.5: every client-chosen string the server keeps (a session, a memory, a
# document id, a cursor it decodes) is bounded, so no peer can park megabytes in
# server state with one field; longer is -32602 naming the field.
MAX_TOKEN_LENGTH = 256
MAX_ID_LENGTH = 1024
MAX_CURSOR_LENGTH = 1024
MAX_KEPT_TEXT_LENGTH = 16_384
Token = Annotated[str, msgspec.Meta(max_length=MAX_TOKEN_LENGTH)]
DocumentId = Annotated[str, msgspec.Meta(max_length=MAX_ID_LENGTH)]
Cursor = Annotated[str, msgspec.Meta(max_length=MAX_CURSOR_LENGTH)]
KeptText = Annotated[str, msgspec.Meta(max_length=MAX_KEPT_TEXT_LENGTH)]

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
