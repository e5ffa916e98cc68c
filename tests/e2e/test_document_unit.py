"""§7.7.2 `unit: "document"` and `"page"`: a hit is its document's own text, each character once.

Found from outside: a 22,289-character document came back as 26,161 characters,
its overlapping chunks joined, every overlap twice, and cited as one chunk's span.
Through the client over stdio against `rcpkit serve`, over a folder indexed by
`rcpkit index` with the bundled MiniLM (chunks overlap by ``chunk_overlap_tokens``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_support import rcpkit
from pdf_support import build_pdf
from tokenizers import Tokenizer

from rcpkit.client import Client
from rcpkit.engine.models._bundled import minilm_tokenizer_directory

TOPICS = ("lighthouse", "orchard", "glacier", "harbour", "vineyard", "observatory", "canal")


def _long_text() -> str:
    """Some 20,000 characters of paragraphs, each sentence numbered, so any repeat shows."""
    paragraphs = []
    for number in range(60):
        topic = TOPICS[number % len(TOPICS)]
        sentences = [
            f"Entry {number}.{line} records how the {topic} crew spent day {number * 7 + line}."
            for line in range(5)
        ]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "logbook.txt").write_text(_long_text())
    (corpus / "note.txt").write_text("A short note about the lighthouse lamp.\n")
    index = tmp_path / "idx"
    done = rcpkit("index", str(corpus), "--index", str(index))
    assert done.returncode == 0, done.stderr
    return index


def _serve(index: Path) -> list[str]:
    # Run with PYTHONPATH passed on, so the server is this tree's code, not an installed one.
    return [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
            "--index", str(index)]  # fmt: skip


async def test_a_document_hit_is_the_documents_text_cited_by_its_exact_span(
    folder: Path,
) -> None:
    text = _long_text()
    async with await Client.connect_stdio(_serve(folder), pass_env=["PYTHONPATH"]) as client:
        chunks = await client.retrieve("the glacier crew", k=50, mode="sparse")
        found = await client.retrieve("the glacier crew", k=2, unit="document")
    from_logbook = [hit for hit in chunks.hits if hit.chunk and hit.chunk.doc_id == "logbook.txt"]
    assert len(from_logbook) > 2  # several chunks: the document is cut, with overlaps
    hit = next(hit for hit in found.hits if hit.id == "logbook.txt")
    assert hit.unit == "document"
    assert hit.text == text
    assert hit.citation is not None
    assert (hit.citation.start, hit.citation.end) == (0, len(text))


async def test_a_token_budget_counts_the_documents_own_text(folder: Path) -> None:
    text = _long_text()
    tokenizer = Tokenizer.from_file(str(minilm_tokenizer_directory() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokens = len(tokenizer.encode(text, add_special_tokens=False).ids)
    async with await Client.connect_stdio(_serve(folder), pass_env=["PYTHONPATH"]) as client:
        # A budget the document fits exactly: its overlaps counted twice, it would not.
        found = await client.retrieve(
            "glacier crew entry", k=1, unit="document", mode="sparse", token_budget=tokens
        )
    assert [hit.id for hit in found.hits] == ["logbook.txt"]
    assert found.usage is not None and found.usage.tokens == tokens


async def test_a_page_hit_is_its_pages_text_cited_by_the_pages_span(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    lines = [
        f"Line {n} of the survey notes how the canal lock {n} held its water." for n in range(45)
    ]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "survey.pdf").write_bytes(build_pdf([lines, ["Appendix", "Tables follow."]]))
    index = tmp_path / "idx"
    done = rcpkit("index", str(corpus), "--index", str(index))
    assert done.returncode == 0, done.stderr
    async with await Client.connect_stdio(_serve(index), pass_env=["PYTHONPATH"]) as client:
        found = await client.retrieve("canal lock water", k=1, unit="page", mode="sparse")
        stored = await client.call("x-rcpkit/document", {"id": "survey.pdf"})
    (hit,) = found.hits
    assert (hit.id, hit.unit) == ("survey.pdf#p1", "page")
    assert hit.citation is not None and hit.citation.start is not None
    start, end = hit.citation.start, hit.citation.end
    page_one = [chunk for chunk in stored["chunks"] if chunk["page"] == 1]
    assert len(page_one) > 2  # the page is cut into overlapping chunks
    assert hit.text == stored["text"][start:end]
    assert start <= min(c["start"] for c in page_one) and max(c["end"] for c in page_one) <= end
    assert all(c["start"] >= end for c in stored["chunks"] if c["page"] == 2)
