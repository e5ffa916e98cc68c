"""chunk_document on source code: split at top-level definitions, keep indentation."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from rcpkit.engine.ingest import ChunkSpan, SourceDocument, chunk_document, whitespace_token_counter


def _code(text: str) -> SourceDocument:
    return SourceDocument(
        id="module.py",
        text=text,
        title=None,
        uri="file:///module.py",
        modality="code",
        meta={},
        pages=None,
        content_hash="0" * 64,
    )


def _check(document: SourceDocument, chunks: Sequence[ChunkSpan], max_tokens: int) -> None:
    for chunk in chunks:
        assert chunk.text == document.text[chunk.start : chunk.end]
        assert chunk.text.strip()
    assert max(whitespace_token_counter([c.text for c in chunks])) <= max_tokens


PYTHON = '''"""A module."""

import os


def first(value):
    """Add one."""
    return value + 1


@cache
@other(option=True)
def second(value):
    # The decorators above belong to this function.
    total = 0
    for item in range(value):
        total += item * 2
    return total


class Third:
    def method(self):
        return os.getcwd()

    def other(self):
        return 3
'''


def test_code_splits_at_top_level_definitions_with_their_decorators() -> None:
    document = _code(PYTHON * 3)
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=40, overlap_tokens=0)
    starts = [chunk.text.split("\n", 1)[0] for chunk in chunks]
    assert all(line.startswith(("def ", "class ", "@cache", '"""', "    def ")) for line in starts)
    assert "@cache" in starts
    assert not any(line.startswith("@other") or line == "def second(value):" for line in starts)


def test_an_indented_code_chunk_keeps_the_indentation_of_its_first_line() -> None:
    document = _code(PYTHON)
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=20, overlap_tokens=0)
    assert any(chunk.text.startswith("    total = 0\n") for chunk in chunks)
    _check(document, chunks, 20)


GO = """package main

import "fmt"

// Add returns the sum.
// It is documented above the function.
func Add(a, b int) int {
	return a + b
}

type Point struct {
	X, Y int
}

func main() {
	fmt.Println(Add(1, 2))
}
"""

JAVASCRIPT = """const limit = 10;

/** Double a value. */
export function double(value) {
  return value * 2;
}

class Counter {
  increment() {
    this.count += 1;
  }
}
"""


def test_go_and_javascript_split_at_definitions_with_their_doc_comments() -> None:
    for source, expected in [
        (GO, {"package main", "// Add returns the sum.", "type Point struct {", "func main() {"}),
        (JAVASCRIPT, {"const limit = 10;", "/** Double a value. */", "class Counter {"}),
    ]:
        document = _code(source)
        chunks = chunk_document(document, whitespace_token_counter, max_tokens=32, overlap_tokens=0)
        _check(document, chunks, 32)
        assert {chunk.text.split("\n", 1)[0] for chunk in chunks} <= expected | {'import "fmt"'}


def test_overlapping_code_chunks_start_at_whole_lines() -> None:
    document = _code(PYTHON * 4)
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=48, overlap_tokens=12)
    _check(document, chunks, 48)
    assert any(a.end > b.start for a, b in itertools.pairwise(chunks))
    assert all(chunk.start == 0 or document.text[chunk.start - 1] == "\n" for chunk in chunks)


def test_an_indented_word_too_long_for_any_chunk_is_cut_inside_the_word() -> None:
    document = _code("def f():\n        " + "x" * 400 + "\n")

    def characters(texts: Sequence[str]) -> list[int]:
        return [len(text) for text in texts]

    chunks = chunk_document(document, characters, max_tokens=64, overlap_tokens=0)
    for chunk in chunks:
        assert chunk.text == document.text[chunk.start : chunk.end]
        assert chunk.text.strip()
        assert len(chunk.text) <= 64
