"""Code chunked at tree-sitter definitions: symbol paths as heading context, per language."""

from __future__ import annotations

from pathlib import Path

import pytest

from rcpkit.engine.ingest import SourceDocument, _code, chunk_document, iter_documents
from rcpkit.engine.ingest._sections import find_sections
from rcpkit.engine.ingest._tokens import whitespace_token_counter

pytest.importorskip("tree_sitter_language_pack")


def _code_document(text: str, ext: str) -> SourceDocument:
    return SourceDocument(
        id=f"module{ext}",
        text=text,
        title=None,
        uri=f"file:///module{ext}",
        modality="code",
        meta={"ext": ext},
        pages=None,
        content_hash="0" * 64,
    )


def _paths(text: str, ext: str) -> list[tuple[str, ...]]:
    """The symbol path of every definition section (chunks may join tiny ones)."""
    return [section.heading_path for section in find_sections(_code_document(text, ext))]


PYTHON = '''import os

# Parses one filter.
@decorator
def parse_filter(text):
    return text


class Parser:
    """A parser."""

    def __init__(self):
        self.x = 1

    @property
    def parseFilter(self):
        def helper():
            return 2
        return helper
'''


def test_python_gives_each_function_class_and_method_its_symbol_path() -> None:
    document = _code_document(PYTHON, ".py")
    assert _paths(PYTHON, ".py") == [
        (),
        ("parse_filter",),
        ("Parser",),
        ("Parser", "__init__"),
        ("Parser", "parseFilter"),
    ]
    # A budget the definitions are not tiny against: each keeps its chunk, but the
    # two-word import block goes with the definition below it (issue 36).
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=24)
    by_path = {chunk.heading_path: chunk.text for chunk in chunks}
    assert list(by_path) == [
        ("parse_filter",),
        ("Parser",),
        ("Parser", "__init__"),
        ("Parser", "parseFilter"),
    ]
    # The comment and the decorator above a definition travel with it; nested helpers stay.
    first = by_path[("parse_filter",)]
    assert first.startswith("import os\n\n# Parses one filter.\n@decorator\ndef")
    assert "def helper" in by_path[("Parser", "parseFilter")]
    # A method chunk starts at its line, indentation kept.
    assert by_path[("Parser", "__init__")].startswith("    def __init__")


@pytest.mark.parametrize(
    ("ext", "text", "expected"),
    [
        (
            ".js",
            "export class Shape {\n  area() { return 1; }\n}\nfunction draw(s) { return s; }\n",
            [("Shape",), ("Shape", "area"), ("draw",)],
        ),
        (
            ".ts",
            "interface Point { x: number }\nexport function norm(p: Point): number {\n"
            "  return p.x;\n}\nclass Grid {\n  cell(i: number): number { return i; }\n}\n",
            [("Point",), ("norm",), ("Grid",), ("Grid", "cell")],
        ),
        (
            ".go",
            "package geo\n\ntype Point struct{ X int }\n\nfunc (p *Point) Norm() int {\n"
            "\treturn p.X\n}\n",
            [(), ("Point",), ("Norm",)],
        ),
        (
            ".rs",
            "struct Point { x: i32 }\nimpl Point {\n    fn norm(&self) -> i32 { self.x }\n}\n",
            [("Point",), ("Point",), ("Point", "norm")],
        ),
        (
            ".java",
            "class Account {\n  Account() {}\n  int balance() { return 0; }\n}\n",
            [("Account",), ("Account", "Account"), ("Account", "balance")],
        ),
        (
            ".c",
            "#include <stdio.h>\nstatic int add(int a, int b) {\n  return a + b;\n}\n",
            [(), ("add",)],
        ),
        (
            ".cpp",
            "namespace geo {\nclass Point {\n public:\n  int norm() { return 1; }\n};\n"
            "int Point::twice() { return 2; }\n}\n",
            [("geo",), ("geo", "Point"), ("geo", "Point", "norm"), ("geo", "Point::twice")],
        ),
    ],
)
def test_common_languages_split_at_their_definitions(
    ext: str, text: str, expected: list[tuple[str, ...]]
) -> None:
    paths = _paths(text, ext)
    assert [path for path in paths if path or () in expected] == expected


def test_offsets_stay_character_offsets_after_non_ascii_text() -> None:
    text = (
        '"""Größe → naïve."""\n\n\ndef größe():\n    return "ß"\n\n\ndef after():\n    return 1\n'
    )
    document = _code_document(text, ".py")
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=24)
    # The one-line module docstring goes with the definition below it (issue 36).
    assert [chunk.heading_path for chunk in chunks] == [("größe",), ("after",)]
    assert chunks[0].text.startswith('"""Größe → naïve."""\n\n\ndef größe():')
    assert chunks[1].text == "def after():\n    return 1"


def test_a_bare_class_line_goes_with_its_first_method_not_into_a_chunk_of_its_own() -> None:
    """Issue 36: a bare ``class X(Y):`` chunk ranked third for a real question."""
    body = "\n".join(f"        total = total + {n}" for n in range(30))
    text = f"class Handler(Base):\n    def handle(self, total):\n{body}\n        return total\n"
    chunks = chunk_document(_code_document(text, ".py"), whitespace_token_counter)
    assert [chunk.heading_path for chunk in chunks] == [("Handler", "handle")]
    assert chunks[0].text.startswith("class Handler(Base):\n    def handle")


def test_without_a_grammar_code_falls_back_to_line_boundaries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_code, "_load_parser", lambda lang: None)
    monkeypatch.setattr(_code, "_local", type(_code._local)())  # drop cached parsers
    document = _code_document(PYTHON, ".py")
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=24)
    assert {chunk.heading_path for chunk in chunks} == {()}
    assert len(chunks) > 1


def test_a_file_of_an_unknown_language_is_chunked_by_the_line_splitter() -> None:
    chunks = chunk_document(
        _code_document("proc main() =\n  echo 1\n", ".nim"), whitespace_token_counter
    )
    assert [chunk.heading_path for chunk in chunks] == [()]


def test_the_code_loader_records_the_language(tmp_path: Path) -> None:
    (tmp_path / "tool.py").write_text(PYTHON, encoding="utf-8")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() {}\n", encoding="utf-8")
    documents = {d.id: d for d in iter_documents([tmp_path]) if isinstance(d, SourceDocument)}
    assert documents["tool.py"].meta["lang"] == "python"
    assert documents["main.go"].meta["lang"] == "go"
    assert documents["tool.py"].modality == "code"
