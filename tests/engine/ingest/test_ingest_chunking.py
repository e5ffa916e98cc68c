"""chunk_document: exact offsets, token bounds, overlap, headings, code and pages."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence

import pytest

from rcpkit.engine.ingest import (
    ChunkSpan,
    SourceDocument,
    chunk_document,
    whitespace_token_counter,
)
from rcpkit.engine.ingest._pdf import join_pages
from rcpkit.engine.ingest._sections import find_sections

Counter = Callable[[Sequence[str]], list[int]]


def bert_like_counter(texts: Sequence[str]) -> list[int]:
    """Additive word pieces (a piece per 4 letters) plus [CLS] and [SEP]."""
    return [2 + sum(1 + len(word) // 4 for word in text.split()) for text in texts]


def character_counter(texts: Sequence[str]) -> list[int]:
    """Not additive over words at all: a token per three characters, spaces included."""
    return [-(-len(text) // 3) for text in texts]


COUNTERS: dict[str, Counter] = {
    "whitespace": whitespace_token_counter,
    "bert-like": bert_like_counter,
    "characters": character_counter,
}


def make_document(
    text: str, *, modality: str = "text", pages: list[str] | None = None
) -> SourceDocument:
    spans = None
    if pages is not None:
        text, spans = join_pages(pages)
    return SourceDocument(
        id="doc",
        text=text,
        title="Doc",
        uri="file:///doc",
        modality="code" if modality == "code" else "text",
        meta={},
        pages=spans,
        content_hash="0" * 64,
    )


WORDS = (
    "the retrieval engine indexes every chunk with exact offsets for citations naïve café "
    "end. Why? (paren) “quoted.” 3.14 e.g. well-known 日本語 🙂 * 1. | x_y CamelCase"
).split()
SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", "\n\n", "\n\n\n", " \n ", "\u00a0", "\r\n"]


def random_document(rng: random.Random) -> tuple[SourceDocument, list[tuple[int, tuple[str, ...]]]]:
    """A random Markdown-ish document and where each heading path begins."""
    parts = [rng.choice(["", "  \n"])]
    paths: list[tuple[int, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []
    length = len(parts[0])
    for block in range(rng.randint(1, 12)):
        if block and rng.random() < 0.4:
            level = rng.randint(1, 4)
            title = f"Heading {block}"
            stack = [entry for entry in stack if entry[0] < level] + [(level, title)]
            paths.append((length, tuple(t for _, t in stack)))
            heading = "#" * level + " " + title + "\n\n"
            parts.append(heading)
            length += len(heading)
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 150))]
        body = words[0] + "".join(rng.choice(SEPARATORS) + word for word in words[1:])
        parts.append(body + "\n\n")
        length += len(body) + 2
    return make_document("".join(parts)), paths


def check_invariants(
    document: SourceDocument, chunks: list[ChunkSpan], counter: Counter, max_tokens: int
) -> None:
    text = document.text
    assert [chunk.index for chunk in chunks] == list(range(len(chunks)))
    covered = bytearray(len(text))
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.text.strip(), "whitespace-only chunk"
        assert not text[chunk.end - 1].isspace()
        covered[chunk.start : chunk.end] = b"\x01" * (chunk.end - chunk.start)
    assert all(covered[i] or char.isspace() for i, char in enumerate(text)), "text lost"
    for earlier, later in itertools.pairwise(chunks):
        assert earlier.start < later.start
        assert earlier.end < later.end
    counts = counter([chunk.text for chunk in chunks])
    assert max(counts, default=0) <= max_tokens


def starts_and_ends_at_word_gaps(text: str, chunk: ChunkSpan) -> bool:
    before = text[chunk.start - 1] if chunk.start else " "
    after = text[chunk.end] if chunk.end < len(text) else " "
    return before.isspace() and after.isspace()


@pytest.mark.parametrize("counter_name", sorted(COUNTERS))
def test_offsets_bounds_and_coverage_hold_for_random_documents(counter_name: str) -> None:
    counter = COUNTERS[counter_name]
    rng = random.Random(20240501)
    for _ in range(150):
        document, _ = random_document(rng)
        max_tokens = rng.randint(12, 300)
        overlap = rng.randint(0, max_tokens // 2)
        chunks = chunk_document(document, counter, max_tokens=max_tokens, overlap_tokens=overlap)
        check_invariants(document, chunks, counter, max_tokens)


def test_random_chunks_never_cut_a_word_and_follow_their_headings() -> None:
    rng = random.Random(7)
    for _ in range(150):
        document, paths = random_document(rng)
        chunks = chunk_document(document, bert_like_counter, max_tokens=rng.randint(16, 200))
        for chunk in chunks:
            assert starts_and_ends_at_word_gaps(document.text, chunk), chunk
            first = next((p for start, p in reversed(paths) if start <= chunk.start), ())
            inside = [path for start, path in paths if chunk.start < start < chunk.end]
            # Sections that fit one chunk together are one chunk (issue 36), which
            # carries the heading path they all share; no other chunk crosses a heading.
            assert chunk.heading_path == _shared_prefix([first, *inside])


def _shared_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    shared = paths[0]
    for path in paths[1:]:
        length = next(
            (i for i, (a, b) in enumerate(zip(shared, path, strict=False)) if a != b), None
        )
        shared = shared[: min(len(shared), len(path)) if length is None else length]
    return shared


def test_random_code_and_paged_documents_keep_the_invariants() -> None:
    rng = random.Random(99)
    for _ in range(60):
        document, _ = random_document(rng)
        code = make_document(document.text, modality="code")
        pages = make_document("", pages=document.text.split("\n\n\n"))
        for variant in (code, pages):
            chunks = chunk_document(variant, whitespace_token_counter, max_tokens=40)
            check_invariants(variant, chunks, whitespace_token_counter, 40)


def test_headings_start_chunks_and_record_the_path_above_them() -> None:
    text = (
        "# Guide\n\nWelcome to the guide.\n\n## Install\n\n### On Linux\n\nUse apt.\n\n"
        "### On Mac\n\nUse brew.\n\n## Usage\n\nRun it.\n"
    )
    filler = " ".join(["word"] * 20)  # no two neighbouring sections fit one chunk
    text = text.replace(".\n", f". {filler}\n")
    chunks = chunk_document(make_document(text), whitespace_token_counter, max_tokens=48)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Guide",), f"# Guide\n\nWelcome to the guide. {filler}"),
        (("Guide", "Install", "On Linux"), f"## Install\n\n### On Linux\n\nUse apt. {filler}"),
        (("Guide", "Install", "On Mac"), f"### On Mac\n\nUse brew. {filler}"),
        (("Guide", "Usage"), f"## Usage\n\nRun it. {filler}"),
    ]


def test_small_neighbouring_sections_are_one_chunk_with_the_path_they_share() -> None:
    text = (
        "# Guide\n\nWelcome to the guide.\n\n## Install\n\n### On Linux\n\nUse apt.\n\n"
        "### On Mac\n\nUse brew.\n\n## Usage\n\nRun it.\n"
    )
    chunks = chunk_document(make_document(text), whitespace_token_counter, max_tokens=64)
    assert [(c.heading_path, c.text) for c in chunks] == [(("Guide",), text.strip())]
    install = text[text.index("## Install") : text.index("## Usage")]
    chunks = chunk_document(make_document(install), whitespace_token_counter, max_tokens=64)
    assert [c.heading_path for c in chunks] == [("Install",)]


def test_release_notes_with_a_heading_per_version_are_not_a_chunk_per_version() -> None:
    """Issue 36: one release-notes file made 31 % of a corpus's chunks, most a few words."""
    versions = [
        f"## 0.{minor}.0\n\n### Fixes\n\n* Fix the parser for case {minor}.\n\n"
        f"### Docs\n\n* Typo in the tutorial.\n\n"
        for minor in range(300, 0, -1)
    ]
    document = make_document("# Release notes\n\n" + "".join(versions))
    chunks = chunk_document(document, whitespace_token_counter, max_tokens=200)
    check_invariants(document, chunks, whitespace_token_counter, 200)
    assert len(chunks) <= 50  # 600 sections (a bare version heading joins its first)
    assert all(len(chunk.text) >= 80 for chunk in chunks[:-1])
    assert {chunk.heading_path for chunk in chunks} <= {("Release notes",)} | {
        ("Release notes", f"0.{minor}.0") for minor in range(301)
    }


def test_setext_headings_and_fenced_hashes_are_read_as_markdown_reads_them() -> None:
    text = "Title\n=====\n\nIntro.\n\n```sh\n# not a heading\n```\n\nPart\n----\n\nBody.\n"
    sections = find_sections(make_document(text))
    assert [s.heading_path for s in sections] == [("Title",), ("Title", "Part")]
    assert "# not a heading" in text[sections[0].start : sections[0].end]


def test_yaml_front_matter_is_not_mistaken_for_a_heading() -> None:
    text = "---\ntitle: Notes\ntags: [a]\n---\n\n# Real heading\n\nBody.\n"
    sections = find_sections(make_document(text))
    assert [s.heading_path for s in sections] == [(), ("Real heading",)]


def test_a_counter_that_answers_the_wrong_number_of_counts_is_an_error() -> None:
    with pytest.raises(ValueError, match="counts for"):
        chunk_document(make_document("some words"), lambda texts: [1])


def test_text_that_fits_is_one_chunk_trimmed_of_surrounding_whitespace() -> None:
    document = make_document("\n\n   Just one short paragraph.   \n\n")
    (chunk,) = chunk_document(document, whitespace_token_counter)
    assert chunk.text == "Just one short paragraph."
    assert (chunk.start, chunk.heading_path, chunk.page) == (5, (), None)


def test_whitespace_only_text_gives_no_chunks() -> None:
    assert chunk_document(make_document(" \n\t\n "), whitespace_token_counter) == []


def _prose(sentences: int) -> str:
    return " ".join(
        f"Sentence {i} talks about topic {i % 7} in plain words." for i in range(sentences)
    )


def test_neighbouring_chunks_overlap_by_about_the_overlap_budget() -> None:
    document = make_document(_prose(200))
    chunks = chunk_document(document, bert_like_counter, max_tokens=80, overlap_tokens=16)
    assert len(chunks) > 10
    for earlier, later in itertools.pairwise(chunks):
        shared = document.text[later.start : earlier.end]
        assert later.start < earlier.end
        assert 1 <= bert_like_counter([shared])[0] - 2 <= 16
        assert shared.startswith("Sentence"), "overlap starts at a sentence when it can"


def test_chunks_prefer_paragraph_then_sentence_ends() -> None:
    paragraphs = "\n\n".join(_prose(4) for _ in range(12))
    chunks = chunk_document(make_document(paragraphs), bert_like_counter, max_tokens=120)
    text = paragraphs
    assert all(text[c.end : c.end + 2] in ("\n\n", "") for c in chunks)
    sentences = _prose(60)
    chunks = chunk_document(make_document(sentences), bert_like_counter, max_tokens=50)
    assert all(c.text.endswith(".") for c in chunks)


def test_zero_overlap_gives_disjoint_chunks() -> None:
    chunks = chunk_document(make_document(_prose(100)), whitespace_token_counter, overlap_tokens=0)
    assert all(a.end < b.start for a, b in itertools.pairwise(chunks))


def test_a_word_longer_than_the_budget_is_the_only_thing_cut_mid_word() -> None:
    text = "before " + "x" * 5000 + " after"
    document = make_document(text)
    chunks = chunk_document(document, character_counter, max_tokens=50, overlap_tokens=5)
    check_invariants(document, chunks, character_counter, 50)
    assert chunks[0].text.startswith("before")
    assert chunks[-1].text.endswith("after")
    assert "".join(c.text for c in chunks if set(c.text) == {"x"}) in "x" * 5000


def test_special_tokens_the_counter_adds_count_against_the_budget() -> None:
    document = make_document(_prose(50))
    chunks = chunk_document(document, bert_like_counter, max_tokens=30, overlap_tokens=4)
    assert max(bert_like_counter([c.text for c in chunks])) <= 30
    assert max(bert_like_counter([c.text for c in chunks])) >= 20, "budget is used"


@pytest.mark.parametrize(("max_tokens", "overlap_tokens"), [(0, 0), (10, -1), (2, 0)])
def test_impossible_budgets_are_rejected(max_tokens: int, overlap_tokens: int) -> None:
    with pytest.raises(ValueError, match=r"max_tokens|overlap_tokens"):
        chunk_document(
            make_document("words"),
            bert_like_counter,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
        )


def test_a_megabyte_is_chunked_fast_with_a_few_batched_counter_calls() -> None:
    rng = random.Random(3)
    vocabulary = [f"word{i}" for i in range(5000)] + WORDS
    paragraphs = []
    while sum(map(len, paragraphs)) < 1_000_000:
        paragraphs.append(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(10, 200))))
    document = make_document("\n\n".join(paragraphs))
    calls: list[int] = []

    def counting(texts: Sequence[str]) -> list[int]:
        calls.append(len(texts))
        return whitespace_token_counter(texts)

    chunks = chunk_document(document, counting)
    # The work, not the clock (a loaded machine stretches any clock, issue 52): a few
    # batched calls, and each paragraph counted a bounded number of times (7,184 texts
    # for 1,081 paragraphs), not again for every chunk it might join.
    assert len(calls) <= 10
    assert sum(calls) < 10 * len(paragraphs), (sum(calls), len(paragraphs))
    assert len(chunks) > 500
    assert all(chunk.text == document.text[chunk.start : chunk.end] for chunk in chunks)
