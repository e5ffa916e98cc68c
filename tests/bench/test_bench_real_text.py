"""The real-text chunks ``rcpkit bench solr`` ingests: what is installed here, cut as said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rcpkit_bench import _real_text
from rcpkit_bench.report import BenchUnavailable


def _collection(folder: Path, abstracts: list[str], questions: list[str]) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": str(n), "text": t}) + "\n" for n, t in enumerate(abstracts))
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": str(n), "text": q}) + "\n" for n, q in enumerate(questions))
    )
    return folder


def test_chunks_are_distinct_windows_of_the_collection_then_of_installed_docstrings(
    tmp_path: Path,
) -> None:
    long = " ".join(f"w{n}" for n in range(130))  # 60 + 60 + 10 words: the last too short
    cranfield = _collection(tmp_path / "c", [long, long, "too short"], ["what flows"])
    chunks = _real_text.chunks(40, cranfield)
    words = long.split()
    assert chunks[:2] == [" ".join(words[:60]), " ".join(words[60:120])]
    assert len(set(chunks)) == 40  # the repeated abstract added nothing
    assert all(20 <= len(chunk.split()) <= _real_text.WINDOW for chunk in chunks)
    assert _real_text.queries(5, cranfield) == ["what flows"]


def test_asking_for_more_chunks_than_are_here_is_unavailable_not_a_short_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "site"
    empty.mkdir()
    (empty / "m.py").write_text('"""' + " ".join(f"d{n}" for n in range(25)) + '"""\n')
    paths = {"stdlib": str(empty), "purelib": str(empty)}  # this Python's, narrowed
    monkeypatch.setattr(_real_text.sysconfig, "get_paths", lambda: paths)
    cranfield = _collection(tmp_path / "c", [" ".join(f"w{n}" for n in range(30))], ["q"])
    assert len(_real_text.chunks(2, cranfield)) == 2
    with pytest.raises(BenchUnavailable, match="only 2 real-text chunks"):
        _real_text.chunks(3, cranfield)
