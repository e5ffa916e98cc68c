"""Property tests: for any text, chunk offsets are exact and nothing is lost or blank."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from rcpkit.engine.ingest import SourceDocument, chunk_document, whitespace_token_counter

hypothesis = pytest.importorskip("hypothesis")
strategies = pytest.importorskip("hypothesis.strategies")
configuration = pytest.importorskip("hypothesis.configuration")

# Hypothesis caches Unicode tables and source constants under ./.hypothesis, from
# collection on; a test run should leave nothing in the work tree, so point it away.
configuration.set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "rcpkit-hypothesis")

# Characters that exercise headings, fences, setext underlines, sentence ends, CJK,
# astral code points and every kind of whitespace the splitter has to tell apart.
_ALPHABET = list("ab cd\n\n\n#.!?-=`~|*1 é日。🙂\t\r\u00a0\u2028\x0b\x1c")
_TEXTS = strategies.one_of(
    strategies.text(strategies.sampled_from(_ALPHABET), max_size=800),
    strategies.text(max_size=300),
)


def character_counter(texts: Sequence[str]) -> list[int]:
    return [-(-len(text) // 3) for text in texts]


def _document(text: str, modality: str) -> SourceDocument:
    return SourceDocument(
        id="doc",
        text=text,
        title=None,
        uri="file:///doc",
        modality="code" if modality == "code" else "text",
        meta={},
        pages=None,
        content_hash="0" * 64,
    )


@hypothesis.settings(max_examples=300, deadline=None, database=None)
@hypothesis.given(
    text=_TEXTS,
    modality=strategies.sampled_from(["text", "code"]),
    characters=strategies.booleans(),
    max_tokens=strategies.integers(min_value=4, max_value=60),
    overlap_tokens=strategies.integers(min_value=0, max_value=40),
)
def test_any_text_chunks_into_exact_bounded_non_blank_spans_covering_it(
    text: str, modality: str, characters: bool, max_tokens: int, overlap_tokens: int
) -> None:
    counter = character_counter if characters else whitespace_token_counter
    document = _document(text, modality)
    chunks = chunk_document(document, counter, max_tokens=max_tokens, overlap_tokens=overlap_tokens)
    covered = bytearray(len(text))
    for index, chunk in enumerate(chunks):
        assert chunk.index == index
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text.strip()
        covered[chunk.start : chunk.end] = b"\x01" * len(chunk.text)
    assert all(covered[i] or char.isspace() for i, char in enumerate(text))
    assert all(a.start < b.start and a.end < b.end for a, b in itertools.pairwise(chunks))
    assert max(counter([chunk.text for chunk in chunks]), default=0) <= max_tokens
