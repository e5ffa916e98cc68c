"""Loaders for .rst, .docx, .csv/.tsv, .json and .ipynb (and the text they cite into).

Offsets are into ``SourceDocument.text``. For .rst, .csv/.tsv in ``table`` mode
and .json files of one record that *is* the raw file text (offsets into the file);
for .docx, .ipynb and every per-record document it is extracted text, which
``meta.textOf = "extracted"`` says and ``rcpkit show ID`` prints (see README).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

from rcpkit.engine.ingest._decoding import decode_text
from rcpkit.engine.ingest._markdown import markdown_title
from rcpkit.engine.ingest._source import FileSource, SkipFile, build_document, read_source_bytes
from rcpkit.engine.ingest._types import Skipped, SourceDocument

__all__ = ["EXTRACTED", "load_csv", "load_docx", "load_ipynb", "load_json", "load_rst"]

EXTRACTED = {"textOf": "extracted"}  # meta: offsets are into extracted text, not the file
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:.])\1{2,}[ \t]*$")
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_DC = "{http://purl.org/dc/elements/1.1/}"


def load_rst(source: FileSource) -> list[SourceDocument]:
    raw = read_source_bytes(source)
    text = decode_text(raw, allow_latin1=False)
    return [build_document(source, raw, text=text, title=_rst_title(text))]


def _rst_title(text: str) -> str | None:
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=1):
        title = lines[number - 1].strip()
        if _RST_UNDERLINE.match(line) and title and not _RST_UNDERLINE.match(title):
            return title
    return None


def load_docx(source: FileSource) -> list[SourceDocument]:
    """Paragraphs of ``word/document.xml``; Heading styles rendered as Markdown headings."""
    raw = read_source_bytes(source)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            body = ElementTree.fromstring(archive.read("word/document.xml"))
            title = _docx_title(archive)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError):
        raise SkipFile("not a readable .docx (no word/document.xml)") from None
    paragraphs = [_docx_paragraph(node) for node in body.iter(f"{_W}p")]
    text = "\n\n".join(paragraph for paragraph in paragraphs if paragraph.strip())
    return [
        build_document(source, raw, text=text, title=title or markdown_title(text), extra=EXTRACTED)
    ]


def _docx_paragraph(node: ElementTree.Element) -> str:
    text = "".join(
        part.text or ("\t" if part.tag == f"{_W}tab" else "")
        for part in node.iter()
        if part.tag in (f"{_W}t", f"{_W}tab")
    )
    style = node.find(f"{_W}pPr/{_W}pStyle")
    name = (style.get(f"{_W}val") or "") if style is not None else ""
    level = re.fullmatch(r"(?i)heading\s*([1-6])", name)
    if name.lower() == "title":
        return f"# {text.strip()}"
    return f"{'#' * int(level.group(1))} {text.strip()}" if level else text


def _docx_title(archive: zipfile.ZipFile) -> str | None:
    try:
        core = ElementTree.fromstring(archive.read("docProps/core.xml"))
    except (KeyError, ElementTree.ParseError):
        return None
    node = core.find(f"{_DC}title")
    return node.text.strip() if node is not None and node.text and node.text.strip() else None


def load_csv(source: FileSource) -> Iterator[SourceDocument | Skipped]:
    """``row`` mode: a document per data row (``id#row=N``); ``table``: the file whole."""
    raw = read_source_bytes(source)
    text = decode_text(raw, allow_latin1=True)
    if source.options.table_mode == "table":
        yield build_document(source, raw, text=text, title=None)
        return
    dialect = "excel-tab" if source.ext == ".tsv" else "excel"
    rows = list(csv.reader(io.StringIO(text), dialect))
    if len(rows) < 2:
        raise SkipFile("no data rows under the header")
    header = [name.strip() or f"column {i + 1}" for i, name in enumerate(rows[0])]
    for number, row in enumerate(rows[1:], start=1):
        body = "\n".join(f"{name}: {value}" for name, value in zip(header, row, strict=False))
        if not any(value.strip() for value in row):
            continue
        yield build_document(
            source,
            "\x1f".join(row).encode(),
            text=body,
            title=(row[0].strip() or None) if row else None,
            doc_id=f"{source.doc_id}#row={number}",
            uri=f"{source.uri}#row={number}",
            extra={**EXTRACTED, "row": number},
        )


def load_json(source: FileSource) -> Iterator[SourceDocument | Skipped]:
    """An object is one record, an array of objects is one record each (see IngestOptions)."""
    raw = read_source_bytes(source)
    try:
        value = json.loads(decode_text(raw, allow_latin1=False))
    except json.JSONDecodeError as error:
        raise SkipFile(f"invalid JSON ({error.msg} at line {error.lineno})") from None
    records = value if isinstance(value, list) else [value]
    for index, record in enumerate(records):
        try:
            yield record_document(source, record, index, json.dumps(record).encode())
        except SkipFile as skip:
            yield Skipped(source.path, f"record {index}: {skip.reason}")


def record_document(source: FileSource, record: Any, position: int, raw: bytes) -> SourceDocument:
    """One JSON record: its text field, its id field (else ``file#position``), its title."""
    options = source.options
    if not isinstance(record, dict):
        raise SkipFile("not a JSON object")
    text = record.get(options.text_field)
    if not isinstance(text, str):
        raise SkipFile(f"no string field {options.text_field!r} (set [ingest] text_field)")
    identifier = record.get(options.id_field)
    if isinstance(identifier, bool) or not isinstance(identifier, str | int) or identifier == "":
        identifier = f"{source.doc_id}#{position}"
    title = record.get(options.title_field)
    reserved = {options.text_field, options.id_field, options.title_field}
    extra = {key: item for key, item in record.items() if key not in reserved}
    return build_document(
        source,
        raw,
        text=text.replace("\r\n", "\n"),
        title=title if isinstance(title, str) else None,
        doc_id=str(identifier),
        uri=f"{source.uri}#{quote(str(identifier), safe='')}",
        extra={**extra, **EXTRACTED, "record": position},
    )


def load_ipynb(source: FileSource) -> list[SourceDocument]:
    """Markdown cells as they are and code cells fenced, in notebook order."""
    raw = read_source_bytes(source)
    try:
        notebook = json.loads(decode_text(raw, allow_latin1=False))
        cells = notebook["cells"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise SkipFile("not a Jupyter notebook (no cells)") from None
    parts = []
    for cell in cells:
        body = "".join(cell.get("source") or [])
        if cell.get("cell_type") == "code" and body.strip():
            parts.append(f"```\n{body.rstrip()}\n```")
        elif body.strip():
            parts.append(body.strip())
    text = "\n\n".join(parts)
    return [build_document(source, raw, text=text, title=markdown_title(text), extra=EXTRACTED)]
