"""BEIR corpus files: one JSON object ``{"_id", "title", "text", ...}`` per line.

Every row is its own document, so the file is streamed rather than read whole: BEIR
corpora run to gigabytes. A bad row is one `Skipped` with its line number and the
rest of the file goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

from rcpkit.engine.ingest._decoding import SNIFF_BYTES, normalize_newlines
from rcpkit.engine.ingest._source import FileSource, SkipFile, sha256_hex
from rcpkit.engine.ingest._types import Skipped, SourceDocument

__all__ = ["load_beir"]

_RESERVED_FIELDS = frozenset(["_id", "title", "text"])


class _BadRow(Exception):
    pass


def load_beir(source: FileSource) -> Iterator[SourceDocument | Skipped]:
    """Each well-formed row as a document with id ``_id``; malformed rows as skips."""
    seen: set[str] = set()
    rows = 0
    with source.path.open("rb") as handle:
        if b"\x00" in handle.read(SNIFF_BYTES):
            raise SkipFile("binary file (NUL bytes in the first 8 KB)")
        handle.seek(0)
        for number, line in enumerate(handle, start=1):
            row = line.strip()
            if not row:
                continue
            rows += 1
            try:
                document = _row_document(source, row, number)
            except _BadRow as error:
                yield Skipped(source.path, f"line {number}: {error}", line=number)
                continue
            if document.id in seen:
                yield Skipped(source.path, f"line {number}: duplicate _id", line=number)
                continue
            seen.add(document.id)
            yield document
    if rows == 0:
        raise SkipFile("empty or whitespace-only")


def _row_document(source: FileSource, row: bytes, number: int) -> SourceDocument:
    fields = _parse_row(row, first=number == 1)
    doc_id = _row_id(fields.get("_id"))
    raw_title = _optional_string(fields.get("title"), "title")
    title = raw_title.strip() if raw_title is not None else None
    text = normalize_newlines(_optional_string(fields.get("text"), "text") or "")
    # BEIR has title-only rows; qrels still point at them, so the title stands in.
    if not text.strip():
        if title is None:
            raise _BadRow("no text and no title")
        text = title
    extras = {key: value for key, value in fields.items() if key not in _RESERVED_FIELDS}
    return SourceDocument(
        id=doc_id,
        text=text,
        title=title,
        uri=f"{source.uri}#{quote(doc_id, safe='')}",
        modality="text",
        meta={**source.meta(), "line": number, "title": title, **extras},
        pages=None,
        content_hash=sha256_hex(row),
    )


def _parse_row(row: bytes, *, first: bool) -> dict[str, object]:
    try:
        fields = json.loads(row.decode("utf-8-sig" if first else "utf-8"))
    except UnicodeDecodeError:
        raise _BadRow("not valid UTF-8") from None
    except json.JSONDecodeError as error:
        raise _BadRow(f"invalid JSON ({error.msg})") from None
    if not isinstance(fields, dict):
        raise _BadRow("not a JSON object")
    return fields


def _row_id(value: object) -> str:
    # Some BEIR dumps write numeric ids; bool is an int in Python and never an id.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise _BadRow("missing or empty _id")


def _optional_string(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRow(f"{name} is not a string")
    return value if value.strip() else None
