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


def _narrowed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sources: list[Path]) -> None:
    """Only the given folders' Python strings, and a cache of this test's own."""
    found = [
        _real_text.Source(
            f"strings-{n}",
            lambda root=root: sorted(root.rglob("*.py")),
            _real_text._markup.python_strings,
        )
        for n, root in enumerate(sources)
    ]
    monkeypatch.setattr(_real_text, "sources", lambda: found)
    monkeypatch.setattr(_real_text, "CACHE", tmp_path / "cache")


def test_chunks_are_distinct_windows_of_the_collection_then_of_installed_docstrings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = " ".join(f"w{n}" for n in range(130))  # 60 + 60 + 10 words: the last too short
    site = tmp_path / "site"
    site.mkdir()
    for n in range(40):
        (site / f"m{n:02}.py").write_text(f'"""{long.replace("w", f"d{n}-")}"""\n')
    _narrowed(monkeypatch, tmp_path, [site])
    cranfield = _collection(tmp_path / "c", [long, long, "too short"], ["what flows"])
    chunks = _real_text.chunks(40, cranfield)
    words = long.split()
    assert chunks[:2] == [" ".join(words[:60]), " ".join(words[60:120])]
    assert len(set(chunks)) == 40  # the repeated abstract added nothing
    assert chunks[2] == " ".join(f"d0-{n}" for n in range(60))  # then the strings, in order
    assert all(20 <= len(chunk.split()) <= _real_text.WINDOW for chunk in chunks)
    assert _real_text.queries(5, cranfield) == ["what flows"]


def test_asking_for_more_chunks_than_are_here_is_unavailable_not_a_short_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "site"
    empty.mkdir()
    (empty / "m.py").write_text('"""' + " ".join(f"d{n}" for n in range(25)) + '"""\n')
    _narrowed(monkeypatch, tmp_path, [empty])
    cranfield = _collection(tmp_path / "c", [" ".join(f"w{n}" for n in range(30))], ["q"])
    assert len(_real_text.chunks(2, cranfield)) == 2
    with pytest.raises(BenchUnavailable, match="only 2 real-text chunks"):
        _real_text.chunks(3, cranfield)
    assert _real_text.available(cranfield) == 2


def test_kept_passages_are_read_back_until_a_source_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    module = site / "m.py"
    module.write_text('"""' + " ".join(f"old{n}" for n in range(25)) + '"""\n')
    _narrowed(monkeypatch, tmp_path, [site])
    cranfield = tmp_path / "no-cranfield"
    first = _real_text.chunks(1, cranfield)
    assert [path.suffix for path in (tmp_path / "cache").iterdir()] == [".txt"]
    assert _real_text.chunks(1, cranfield) == first  # read back from the kept passages
    module.write_text('"""' + " ".join(f"new{n}" for n in range(30)) + '"""\n')
    assert _real_text.chunks(1, cranfield)[0].startswith("new0 ")


def test_past_every_source_s_windows_come_the_same_texts_windows_shifted_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = " ".join(f"w{n}" for n in range(130))  # windows 0-59, 60-119 (120-129: too short)
    site = tmp_path / "site"
    site.mkdir()
    (site / "m.py").write_text(f'"""{long.replace("w", "d")}"""\n')
    _narrowed(monkeypatch, tmp_path, [site])
    short = " ".join(f"s{n}" for n in range(45))
    cranfield = _collection(tmp_path / "c", [long, short], ["q"])
    first = _real_text.chunks(5, cranfield)  # abstract 2 + short abstract 1 + string 2
    assert _real_text.unshifted(cranfield) == 5
    chunks = _real_text.chunks(18, cranfield)
    assert chunks[:5] == first  # the first pass is what it was; the shifted ones come after
    words, shorts = long.split(), short.split()
    assert _real_text.SHIFTS == (0, 30, 15, 45)
    # Half a window in: the short abstract's would be 15 words, too short, left out.
    assert chunks[5:7] == [" ".join(words[30:90]), " ".join(words[90:130])]
    assert chunks[7].startswith("d30 d31 ")
    # A quarter in: the short abstract's 30 words count; three quarters in, 25 of the long.
    assert chunks[9:12] == [" ".join(words[15:75]), " ".join(words[75:130]), " ".join(shorts[15:])]
    assert chunks[14:16] == [" ".join(words[45:105]), " ".join(words[105:130])]
    assert _real_text.available(cranfield) == 18
    kept = sorted(path.name.rsplit("-", 1)[0] for path in (tmp_path / "cache").iterdir())
    assert kept == ["strings-0", *(f"strings-0-shifted{n}" for n in (15, 30, 45))]
