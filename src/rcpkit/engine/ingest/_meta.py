"""A document's ``meta`` at ingest: file facts, front matter, ``lang``, ``date``, ``year``, ``tag``.

* Front-matter keys are renamed by ``[ingest.fields]`` (``categories = "tag"``) and
  ``tags`` is read as ``tag``; every key whose name is an advertised filter field
  must hold that field's type (``year: "soon"`` for an ``int`` field skips the file
  with a reason naming the key, the value and the type).
* ``lang`` — front matter, else detected from stop words (ISO 639-1 code, only when
  one language clearly wins on at least 20 stop words; otherwise absent).
* ``date`` — front matter ``date``, else the file's modification time (RFC 3339 UTC).
  ``year`` — front matter ``year``, else the year of a front-matter ``date``.
* ``tag`` — front matter; source-code files also get ``code``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from rcpkit.engine.ingest._types import SkipFile
from rcpkit.protocol.filters._field_types import kind_of

__all__ = ["document_meta", "detect_language"]

_RENAMES = {"tags": "tag", "language": "lang"}
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_SAMPLE_CHARS = 20_000
_MIN_HITS = 20

_STOP_WORDS = {
    "en": "the of and to in is that it for was on are as with be by this from or an not",
    "de": "der die und das ist nicht ein zu den von mit sich des auf für dem eine auch es",
    "fr": "le la les et des est un une du que pas pour dans qui sur au avec ce il sont",
    "es": "el la los las de que y en un una es por con para del se no lo como al",
    "it": "il di che la e per un una non sono del della le gli con si al nel anche",
    "nl": "de het een en van is dat niet op te zijn voor met die aan er ook als",
    "pt": "o os de que e do da em um uma para com não se por mais as dos como",
}
_LEXICON = {lang: frozenset(words.split()) for lang, words in _STOP_WORDS.items()}


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of the language whose stop words dominate ``text``, or None."""
    words = [word.lower() for word in _WORD.findall(text[:_SAMPLE_CHARS])]
    hits: Counter[str] = Counter()
    for word in words:
        for lang, lexicon in _LEXICON.items():
            if word in lexicon:
                hits[lang] += 1
    ranked = hits.most_common(2)
    if not ranked or ranked[0][1] < _MIN_HITS:
        return None
    if len(ranked) > 1 and ranked[1][1] * 1.5 > ranked[0][1]:
        return None  # no clear winner
    return ranked[0][0]


def document_meta(
    base: Mapping[str, object],
    front: Mapping[str, Any],
    text: str,
    *,
    renames: Mapping[str, str],
    field_types: Mapping[str, str],
    code: bool = False,
) -> dict[str, object]:
    """``base`` (path, ext, mtime, size) enriched as the module says; SkipFile on a mismatch."""
    meta: dict[str, object] = dict(base)
    for key, value in front.items():
        name = renames.get(key) or _RENAMES.get(key, key)
        meta[name] = _typed(name, value, field_types)
    if isinstance(meta.get("tag"), str):
        meta["tag"] = [meta["tag"]]
    if code:
        tags = list(meta.get("tag") or [])  # type: ignore[call-overload]
        meta["tag"] = [*tags, "code"] if "code" not in tags else tags
    if "date" in front and "year" not in meta:
        year = re.match(r"(\d{4})-", str(meta["date"]))
        if year is not None:
            meta["year"] = int(year.group(1))
    meta.setdefault("date", base.get("mtime"))
    if "lang" not in meta and not code:
        lang = detect_language(text)
        if lang is not None:
            meta["lang"] = lang
    return meta


def _typed(name: str, value: Any, field_types: Mapping[str, str]) -> Any:
    field_type = field_types.get(name)
    if field_type is None:
        return value
    kind = kind_of(field_type)
    values = value if isinstance(value, list) else [value]
    for item in values:
        if kind.coerce(item) is None:
            raise SkipFile(
                f"front matter {name} = {item!r} does not fit the {field_type} field "
                f"{name} (expected {kind.expected})"
            )
    return value
