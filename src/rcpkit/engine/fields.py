"""Filter fields an index declares for itself: typed at first sight, recorded in the store.

§8 filters only on fields the server advertises, and a store keeps only the
declared fields of a document's metadata for filtering (``normalize_meta``).
The configuration declares the common ones; an in-process caller
(``rcpkit.open``) may add any metadata key, and the index then declares it:
its type is read from the first value seen (a string is ``keyword``, a
boolean ``bool``, a number ``float``; a list makes it array-valued) or given
at open. The declaration is a store setting, so every process that opens the
index afterwards (a server too) filters on it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace

from rcpkit.engine.config import EngineConfig
from rcpkit.engine.store.base import Store

__all__ = [
    "FIELDS_SETTING",
    "declare_fields",
    "first_sight",
    "refresh_declared_fields",
    "with_declared_fields",
]

FIELDS_SETTING = "filter.fields"  # JSON: {"fields": {name: type}, "arrays": [name, ...]}
_lock = threading.Lock()


def with_declared_fields(config: EngineConfig, store: Store) -> EngineConfig:
    """``config`` with the fields ``store`` declared merged in (the configuration's win)."""
    fields, arrays = _recorded(store)
    return replace(
        config,
        filter_fields={**fields, **config.filter_fields},
        array_fields=list(dict.fromkeys([*config.array_fields, *arrays])),
    )


def first_sight(
    metas: Iterable[Mapping[str, object]], known: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """A type for each metadata key not in ``known``, read from its first usable value,
    and those of them whose value was a list (array-valued fields)."""
    found: dict[str, str] = {}
    arrays: list[str] = []
    for meta in metas:
        for name, value in meta.items():
            if name in known or name in found:
                continue
            kind = _kind(value)
            if kind is not None:
                found[name] = kind
                if isinstance(value, list | tuple):
                    arrays.append(name)
    return found, arrays


def declare_fields(
    config: EngineConfig, store: Store, fields: Mapping[str, str], arrays: Iterable[str] = ()
) -> None:
    """Record ``fields`` (and which of them hold arrays) in ``store`` and in ``config``.

    ``config`` is the open engine's own (frozen, shared by every thread): its two
    collections are replaced by larger copies, the one change it ever sees.
    """
    arrays = [name for name in arrays if name not in config.array_fields]
    fresh = {name: kind for name, kind in fields.items() if name not in config.filter_fields}
    if not fresh and not arrays:
        return
    with _lock:
        recorded, recorded_arrays = _recorded(store)
        recorded.update(fresh)
        merged = list(dict.fromkeys([*recorded_arrays, *arrays]))
        store.set_setting(FIELDS_SETTING, json.dumps({"fields": recorded, "arrays": merged}))
        # Swapped, never mutated: a thread iterating the old dict (a search parsing its
        # filter, a write normalising meta) keeps a consistent one.
        fields_now = {**config.filter_fields, **fresh}
        arrays_now = list(dict.fromkeys([*config.array_fields, *merged]))
        object.__setattr__(config, "filter_fields", fields_now)
        object.__setattr__(config, "array_fields", arrays_now)


def refresh_declared_fields(config: EngineConfig, store: Store) -> None:
    """Take into ``config`` the fields another process declared in ``store`` since this
    one opened it (``rcpkit.open(...).add`` beside a running server): its writes then
    keep their values filterable. One settings read; ``config`` is swapped as above."""
    fields, arrays = _recorded(store)
    fresh = {name: kind for name, kind in fields.items() if name not in config.filter_fields}
    new_arrays = [name for name in arrays if name not in config.array_fields]
    if not fresh and not new_arrays:
        return
    with _lock:
        fields_now = {**fresh, **config.filter_fields}
        arrays_now = list(dict.fromkeys([*config.array_fields, *new_arrays]))
        object.__setattr__(config, "filter_fields", fields_now)
        object.__setattr__(config, "array_fields", arrays_now)


def _recorded(store: Store) -> tuple[dict[str, str], list[str]]:
    raw = store.setting(FIELDS_SETTING)
    if not raw:
        return {}, []
    saved = json.loads(raw)
    return dict(saved.get("fields", {})), list(saved.get("arrays", []))


def _kind(value: object) -> str | None:
    if isinstance(value, list | tuple):
        return next((kind for item in value if (kind := _kind(item)) is not None), None)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float"  # an int field would drop a later 2.5; a float field keeps both
    if isinstance(value, str):
        return "keyword"
    return None  # objects and nulls are never filterable (§8)
