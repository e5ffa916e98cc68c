"""The issue-33 collection generators: deterministic, BEIR-layout, one right answer per query.

Generated from this machine's installed material (the standard library here;
man pages when ``/usr/share/man`` has them), through the module's command line
as a user runs it, then read back with ``load_dataset`` as ``rcpkit eval`` does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rcpkit.evaluation.collections import keyword_query
from rcpkit.evaluation.dataset import load_dataset


def _generate(out: Path, only: str, *more: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rcpkit", "collections", str(out), "--only", only, *more],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_an_unknown_collection_is_refused_naming_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rcpkit", "collections", str(tmp_path), "--only", "nope"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no collection nope (one of cranfield, cranfield-keywords," in done.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.timeout(300)
def test_the_stdlib_code_collection_is_the_same_on_every_run(tmp_path: Path) -> None:
    _generate(tmp_path / "a", "stdlib-code")
    _generate(tmp_path / "b", "stdlib-code")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        first = (tmp_path / "a" / "stdlib-code" / name).read_bytes()
        assert first == (tmp_path / "b" / "stdlib-code" / name).read_bytes(), name
    dataset = load_dataset(tmp_path / "a" / "stdlib-code")
    assert len(dataset.queries) >= 500
    assert all(len(grades) == 1 for grades in dataset.qrels.values())  # known items
    assert len(set(dataset.queries.values())) == len(dataset.queries)  # no query twice
    corpus = {document.id: document for document in dataset.corpus}
    for query, grades in list(dataset.qrels.items())[:50]:
        (target,) = grades
        assert "def " in corpus[target].text  # the document is the code
        assert dataset.queries[query] not in corpus[target].text  # the docstring is cut
    assert "standard library" in (tmp_path / "a" / "stdlib-code" / "README.txt").read_text()
    assert {dataset.half("dev").queries.keys().isdisjoint(dataset.half("heldout").queries)}


@pytest.mark.timeout(300)
def test_the_title_only_man_page_collection_masks_the_command_name(tmp_path: Path) -> None:
    if not any(Path("/usr/share/man/man1").glob("*.gz")):
        pytest.skip("no man pages on this machine")
    _generate(tmp_path, "man-short")
    dataset = load_dataset(tmp_path / "man-short")
    corpus = {document.id: document for document in dataset.corpus}
    assert len(dataset.queries) >= 100
    for query, grades in dataset.qrels.items():
        (target,) = grades
        document = corpus[target]
        assert len(document.text.split()) <= 20  # a NAME line: a few words
        assert f" {document.title.casefold()} " not in f" {dataset.queries[query].casefold()} "


@pytest.mark.timeout(300)
def test_the_verbose_man_page_collection_asks_in_paragraphs_not_copies(tmp_path: Path) -> None:
    """Issue 50: long requests that repeat their subject's words, answered by another
    section of the page (its options), the command's name masked."""
    if not any(Path("/usr/share/man/man1").glob("*.gz")):
        pytest.skip("no man pages on this machine")
    _generate(tmp_path, "man-verbose")
    dataset = load_dataset(tmp_path / "man-verbose")
    corpus = {document.id: document for document in dataset.corpus}
    assert len(dataset.queries) >= 100
    lengths = sorted(len(text.split()) for text in dataset.queries.values())
    assert lengths[len(lengths) // 2] >= 60
    copied = 0
    for query, grades in dataset.qrels.items():
        (target,) = grades
        document, asked = corpus[target], dataset.queries[query].casefold()
        assert f" {document.title.casefold()} " not in f" {asked} "
        words = document.text.casefold().split()
        spans = {tuple(words[i : i + 12]) for i in range(len(words) - 11)}
        mine = asked.split()
        copied += any(tuple(mine[i : i + 12]) in spans for i in range(len(mine) - 11))
    assert copied <= 0.02 * len(dataset.qrels)  # a shared sentence at most, rarely


def test_the_mixed_cranfield_cuts_half_the_documents_to_their_title(tmp_path: Path) -> None:
    """The computing-abstracts shape: title-only records beside full ones, same qrels."""
    cranfield = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "cranfield"
    if not (cranfield / "corpus.jsonl").is_file():
        pytest.skip("../shared/datasets/cranfield is not beside the checkout")
    _generate(tmp_path, "cranfield-mixed", "--cranfield", str(cranfield))
    mixed = load_dataset(tmp_path / "cranfield-mixed")
    full = {document.id: document for document in load_dataset(cranfield).corpus}
    cut = [document for document in mixed.corpus if not document.text]
    assert 0.4 < len(cut) / len(mixed.corpus) < 0.6
    assert all(document.title == full[document.id].title for document in cut)
    kept = [document for document in mixed.corpus if document.text]
    assert all(document.text == full[document.id].text for document in kept)
    assert mixed.qrels == load_dataset(cranfield).qrels


def test_a_keyword_query_keeps_the_content_words_once() -> None:
    asked = "what are the structural and aeroelastic problems of high speed aircraft ."
    assert keyword_query(asked) == "structural aeroelastic high speed aircraft"
    assert keyword_query("heat transfer, heat flux") == "heat transfer flux"


def test_a_man_page_in_two_sections_is_one_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`intro` in sections 1 and 8 made duplicate document and query ids in man-short."""
    import gzip

    from rcpkit.evaluation import collections

    page = (
        ".TH {name} {section}\n.SH NAME\n{name} \\- introduction to the commands of section"
        " {section}\n.SH DESCRIPTION\nThis page introduces the commands of this section.\n"
    )
    for section in ("1", "8"):
        folder = tmp_path / f"man{section}"
        folder.mkdir()
        for name in ("intro", f"only{section}"):
            text = page.format(name=name, section=section)
            (folder / f"{name}.{section}.gz").write_bytes(gzip.compress(text.encode()))
    monkeypatch.setattr(collections, "_MAN", tmp_path)
    names = [name for name, *_ in collections._man_pages()]
    assert sorted(names) == ["intro", "only1", "only8"]
