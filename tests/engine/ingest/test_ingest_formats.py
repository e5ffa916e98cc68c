"""The loaders added for issue 14: .mdx, .rst, .docx, .csv/.tsv, .json, .ipynb; front matter."""

from __future__ import annotations

import json
import zipfile
from dataclasses import replace
from pathlib import Path

from rcpkit.engine.ingest import IngestOptions, Skipped, SourceDocument, iter_documents

FIELDS = {"tag": "keyword", "lang": "keyword", "year": "int", "date": "date"}
OPTIONS = IngestOptions(field_types=FIELDS)


def load(path: Path, options: IngestOptions = OPTIONS) -> list[SourceDocument | Skipped]:
    return list(iter_documents([path], options=options))


def documents(path: Path, options: IngestOptions = OPTIONS) -> list[SourceDocument]:
    return [item for item in load(path, options) if isinstance(item, SourceDocument)]


def test_mdx_is_read_as_markdown_with_its_front_matter(tmp_path: Path) -> None:
    path = tmp_path / "page.mdx"
    path.write_text(
        "---\ntitle: Widgets\ntags: [guide, ui]\ndate: 2023-04-05\n---\n"
        "import { Note } from './note'\n\n# Widgets\n\nWidgets are the parts of the screen.\n"
    )
    (document,) = documents(path)
    assert document.title == "Widgets"
    assert document.meta["tag"] == ["guide", "ui"]
    assert document.meta["date"] == "2023-04-05T00:00:00Z"
    assert document.meta["year"] == 2023
    # The block is blanked, not cut: offsets still index the raw file.
    raw = path.read_text()
    assert len(document.text) == len(raw)
    start = document.text.index("Widgets are")
    assert raw[start : start + 11] == "Widgets are"
    assert "title:" not in document.text


def test_toml_front_matter_and_a_field_mapping_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_text('+++\ncategories = ["ops"]\nyear = 2021\n+++\n\nRestart the pump.\n')
    options = replace(OPTIONS, meta_fields={"categories": "tag"})
    (document,) = documents(path, options)
    assert document.meta["tag"] == ["ops"]
    assert document.meta["year"] == 2021


def test_front_matter_of_the_wrong_type_skips_the_file_naming_key_value_and_type(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.md"
    path.write_text("---\nyear: soon\n---\n\nText.\n")
    (skip,) = load(path)
    assert isinstance(skip, Skipped)
    assert skip.path.name == "bad.md"
    assert "year = 'soon'" in skip.reason
    assert "int field year" in skip.reason


def test_lang_is_detected_and_date_falls_back_to_the_file_mtime(tmp_path: Path) -> None:
    english = tmp_path / "en.txt"
    english.write_text(
        "The quality of the water in the river is not what it was, and it is for the "
        "people of the valley to decide what is to be done with the mill that is on it. " * 3
    )
    german = tmp_path / "de.txt"
    german.write_text(
        "Der Hund und die Katze sind nicht im Haus, denn es ist ein schöner Tag, und "
        "sich mit dem Ball auf der Wiese zu vergnügen ist für den Hund das Beste. " * 3
    )
    by_name = {d.id: d for d in documents(tmp_path)}
    assert by_name["en.txt"].meta["lang"] == "en"
    assert by_name["de.txt"].meta["lang"] == "de"
    assert by_name["en.txt"].meta["date"] == by_name["en.txt"].meta["mtime"]


def test_code_is_tagged_code(tmp_path: Path) -> None:
    path = tmp_path / "tool.py"
    path.write_text("def main():\n    return 1\n")
    (document,) = documents(path)
    assert document.meta["tag"] == ["code"]
    assert document.modality == "code"
    # Issue 19: a code file's lang is its programming language, never a detected one.
    assert document.meta["lang"] == "python"


def test_rst_takes_its_title_from_the_first_underlined_heading(tmp_path: Path) -> None:
    path = tmp_path / "intro.rst"
    path.write_text("Getting started\n===============\n\nInstall the package first.\n")
    (document,) = documents(path)
    assert document.title == "Getting started"
    assert document.text == path.read_text()


def _docx(path: Path) -> None:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = (
        f'<w:document xmlns:w="{w}"><w:body>'
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Budget</w:t></w:r></w:p>'
        "<w:p><w:r><w:t>Spend less on </w:t></w:r><w:r><w:t>paper.</w:t></w:r></w:p>"
        "</w:body></w:document>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("word/document.xml", body)


def test_docx_paragraphs_become_text_with_headings(tmp_path: Path) -> None:
    path = tmp_path / "plan.docx"
    _docx(path)
    (document,) = documents(path)
    assert document.text == "# Budget\n\nSpend less on paper."
    assert document.title == "Budget"
    assert document.meta["textOf"] == "extracted"
    (broken,) = load(_write_bytes(tmp_path / "bad.docx", b"not a zip"))
    assert isinstance(broken, Skipped)
    assert "not a readable .docx" in broken.reason


def _write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_csv_rows_are_documents_or_the_table_is_one(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name,role\nAda,engineer\nGrace,admiral\n")
    rows = documents(path)
    assert [d.id for d in rows] == ["people.csv#row=1", "people.csv#row=2"]
    assert rows[0].text == "name: Ada\nrole: engineer"
    assert rows[1].uri.endswith("people.csv#row=2")
    (table,) = documents(path, replace(OPTIONS, table_mode="table"))
    assert table.id == "people.csv"
    assert table.text == path.read_text()
    tsv = tmp_path / "t.tsv"
    tsv.write_text("a\tb\n1\t2\n")
    assert documents(tsv)[0].text == "a: 1\nb: 2"


def test_json_records_with_a_configurable_text_field(tmp_path: Path) -> None:
    path = tmp_path / "faq.json"
    path.write_text(json.dumps([{"q": "Why?", "answer": "Because.", "id": "w"}, {"q": "x"}]))
    options = replace(OPTIONS, text_field="answer", id_field="id", title_field="q")
    items = load(path, options)
    (first,) = [item for item in items if isinstance(item, SourceDocument)]
    assert (first.id, first.title, first.text) == ("w", "Why?", "Because.")
    (skip,) = [item for item in items if isinstance(item, Skipped)]
    assert "record 1: no string field 'answer'" in skip.reason
    lines = tmp_path / "rows.jsonl"
    lines.write_text(json.dumps({"body": "one"}) + "\n" + json.dumps({"body": "two"}) + "\n")
    rows = documents(lines, replace(OPTIONS, text_field="body"))
    assert [d.id for d in rows] == ["rows.jsonl#1", "rows.jsonl#2"]


def test_ipynb_keeps_markdown_and_fences_code(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    cells = [
        {"cell_type": "markdown", "source": ["# Analysis\n", "Load the data."]},
        {"cell_type": "code", "source": "import csv\n"},
    ]
    path.write_text(json.dumps({"cells": cells, "nbformat": 4}))
    (document,) = documents(path)
    assert document.title == "Analysis"
    assert document.text == "# Analysis\nLoad the data.\n\n```\nimport csv\n```"
