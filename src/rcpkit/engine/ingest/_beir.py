"""JSON Lines: one JSON object per line, by default BEIR's ``{"_id", "title", "text", ...}``.

``[ingest] text_field / id_field / title_field`` name other fields; a row without
the id field is ``<file>#<line>``.

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
                yield Skipped(source.path, f"line {number}: duplicate id", line=number)
                continue
            seen.add(document.id)
            yield document
    if rows == 0:
        raise SkipFile("empty or whitespace-only")


def _row_document(source: FileSource, row: bytes, number: int) -> SourceDocument:
    fields = _parse_row(row, first=number == 1)
    options = source.options
    if options.id_field in fields:
        doc_id = _row_id(fields.get(options.id_field), options.id_field)
    else:
        doc_id = f"{source.doc_id}#{number}"
    raw_title = _optional_string(fields.get(options.title_field), options.title_field)
    title = raw_title.strip() if raw_title is not None else None
    text = normalize_newlines(_optional_string(fields.get(options.text_field), "text") or "")
    # BEIR has title-only rows; qrels still point at them, so the title stands in.
    if not text.strip():
        if title is None:
            raise _BadRow("no text and no title")
        text = title
    reserved = {options.id_field, options.title_field, options.text_field}
    extras = {key: value for key, value in fields.items() if key not in reserved}
    return SourceDocument(
        id=doc_id,
        text=text,
        title=title,
        uri=f"{source.uri}#{quote(doc_id, safe='')}",
        modality="text",
        meta={**source.meta(), "line": number, "title": title, **extras},
        pages=None,
        content_hash=sha256_hex(row + b"\0" + options.fingerprint()),
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


def _row_id(value: object, name: str) -> str:
    # Some BEIR dumps write numeric ids; bool is an int in Python and never an id.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    raise _BadRow(f"empty or non-string {name}")


def _optional_string(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRow(f"{name} is not a string")
    return value if value.strip() else None
