"""What a store saves for filtering at write time (§8): declared fields, normalised."""

from __future__ import annotations

from collections.abc import Mapping

from rcpkit.protocol.filters._field_types import kind_of
from rcpkit.protocol.filters._operators import is_filterable
from rcpkit.protocol.filters._tree import FieldType, Scalar

__all__ = ["normalize_meta"]


def normalize_meta(
    meta: Mapping[str, object], fields: Mapping[str, FieldType]
) -> dict[str, object]:
    """The filterable view of a document's metadata, ready to store as JSON.

    * Only fields declared in ``fields`` are kept; the rest are not filterable.
    * Each value is read by its field's type exactly as a filter value would be:
      dates become epoch-ms ints, numbers in ``float`` fields become floats,
      integral floats in ``int`` fields become ints.
    * A value of the wrong type is dropped, so the field is absent for that
      document: ``eq``/``gt``/``in``/``contains``/``exists:true`` never match it,
      and ``ne``/``nin``/``exists:false`` do. ``null`` is absent too (§4.6).
    * A list is an array-valued field; its elements are read one by one and a
      wrong-typed element is dropped (an array stays an array, even if empty).
      Nested arrays and objects are never filterable elements.
    * ``geo`` fields (and unrecognised types) are never stored: no operator applies.
    """
    stored: dict[str, object] = {}
    for name, field_type in fields.items():
        raw = meta.get(name)
        if raw is None:  # most fields are absent from most documents: no call for them
            continue
        value = _normalize_value(raw, field_type)
        if value is not None:
            stored[name] = value
    return stored


def _normalize_value(raw: object, field_type: FieldType) -> Scalar | list[Scalar] | None:
    if raw is None or not is_filterable(field_type):
        return None
    coerce = kind_of(field_type).coerce
    if isinstance(raw, list | tuple):
        elements = (coerce(item) for item in raw)
        return [element for element in elements if element is not None]
    return coerce(raw)
