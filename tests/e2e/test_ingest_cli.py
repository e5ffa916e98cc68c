"""`rcpkit index` run again and again over a folder, through the real CLI (issue 14)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit


def index(folder: Path, target: Path | str, *flags: str, cwd: Path | None = None) -> str:
    done = rcpkit("index", str(target), "--index", str(folder), *HASHING, *flags, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def count(summary: str, label: str) -> int:
    found = re.search(rf"^\s+{label}\s+(\d+)", summary, re.MULTILINE)
    assert found is not None, summary
    return int(found.group(1))


def version(summary: str) -> int:
    found = re.search(r"\(version (\d+)", summary)
    assert found is not None, summary
    return int(found.group(1))


def doc_ids(folder: Path, text: str, k: int = 20) -> list[str]:
    shown = rcpkit(
        "query", text, "--index", str(folder), *HASHING, "-k", str(k), "--mode", "sparse",
        "--json",
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    return [hit["chunk"]["docId"] for hit in json.loads(shown.stdout)["hits"]]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "pdf").mkdir(parents=True)
    (root / "xdrlib.txt").write_text("xdrlib encodes external data representation records\n")
    (root / "guide.md").write_text("# Guide\n\nGardens need water and patient care.\n")
    (root / "pdf" / "futures.txt").write_text("concurrent futures run callables in pools\n")
    return root


def test_a_file_deleted_from_the_folder_is_removed_from_the_index(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    first = index(folder, corpus)
    assert count(first, "total") == 3
    assert doc_ids(folder, "xdrlib external data") == ["xdrlib.txt"]
    (corpus / "xdrlib.txt").unlink()
    again = index(folder, corpus)
    assert count(again, "removed") == 1
    assert count(again, "total") == 2
    assert version(again) == version(first) + 1  # the removal is part of the run's one commit
    assert "xdrlib.txt" not in doc_ids(folder, "xdrlib external data")


def test_no_prune_keeps_documents_whose_file_is_gone(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    index(folder, corpus)
    (corpus / "xdrlib.txt").unlink()
    kept = index(folder, corpus, "--no-prune")
    assert count(kept, "removed") == 0
    assert count(kept, "total") == 3
    assert doc_ids(folder, "xdrlib external data") == ["xdrlib.txt"]


def test_pruning_is_scoped_to_the_folder_indexed(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    index(folder, corpus)
    (corpus / "xdrlib.txt").unlink()
    sub = index(folder, corpus / "pdf")  # xdrlib.txt is not under pdf/: it stays
    assert count(sub, "removed") == 0
    assert count(sub, "total") == 3


def test_document_ids_do_not_depend_on_the_path_given(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    index(folder, corpus)
    index(folder, corpus / "pdf")
    index(folder, ".", cwd=corpus)
    index(folder, "futures.txt", cwd=corpus / "pdf")
    last = index(folder, corpus / ".." / "corpus" / "pdf" / "..")
    assert count(last, "total") == 3
    assert doc_ids(folder, "concurrent futures pools") == ["pdf/futures.txt"]


def test_indexing_a_parent_of_the_root_widens_it_without_duplicates(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    index(folder, corpus / "pdf")
    assert doc_ids(folder, "concurrent futures pools") == ["futures.txt"]
    wider = index(folder, corpus)
    assert "source root moved from" in wider
    assert count(wider, "total") == 3
    assert doc_ids(folder, "concurrent futures pools") == ["pdf/futures.txt"]


def test_a_folder_beside_the_root_is_refused_with_the_way_out(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    other = tmp_path / "other"
    other.mkdir()
    (other / "note.txt").write_text("a note beside the corpus\n")
    index(folder, corpus / "pdf")
    refused = rcpkit("index", str(other), "--index", str(folder), *HASHING)
    assert refused.returncode == 2
    (error,) = [line for line in refused.stderr.splitlines() if line.startswith("rcpkit:")]
    assert "outside this index's source root" in error
    assert "Traceback" not in refused.stderr


def test_an_unchanged_reindex_commits_nothing_and_creates_no_version(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    first = version(index(folder, corpus))
    for _ in range(3):
        again = index(folder, corpus)
        assert "nothing changed, no new version" in again
        assert version(again) == first
    (corpus / "guide.md").write_text("# Guide\n\nGardens need sun as well.\n")
    assert version(index(folder, corpus)) == first + 1


def test_every_skip_reason_is_listed_with_its_count(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nSome text.\n")
    for number in range(25):
        (folder / f"blob{number:02d}.bin").write_bytes(b"\x00\x01")
    (folder / "empty.txt").write_text("  \n")
    summary = index(tmp_path / "idx", folder)
    assert re.search(r"skipped\s+25 × unsupported extension '.bin'", summary)
    assert re.search(r"skipped\s+1 × empty or whitespace-only", summary)
    assert "… and 22 more (--show-skipped lists them all)" in summary
    every = index(tmp_path / "idx", folder, "--show-skipped")
    assert all(f"blob{number:02d}.bin" in every for number in range(25))


def test_a_run_off_a_terminal_is_quiet_but_for_its_first_lines_and_a_summary(
    tmp_path: Path,
) -> None:
    # Issue 51: no progress lines in a log (cron mails them); the last line and the
    # summary give the bytes, the files, the chunks and the chunks per second.
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(300):  # more than one embedder call (256 chunks)
        (docs / f"note{number:03d}.md").write_text(f"# Note {number}\n\nPelican number {number}.\n")
    size = sum(path.stat().st_size for path in docs.iterdir())
    done = rcpkit("index", str(docs), "--index", str(tmp_path / "idx"), *HASHING)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("indexing: opening") and lines[1] == "indexing: 300 files to read"
    assert len(lines) == 3, done.stderr
    assert f"bytes {size / 1000:.1f} kB/{size / 1000:.1f} kB (" in lines[2]
    assert re.search(r"files 300/300 \(.*chunks 300 \(.* in \d:\d\d:\d\d$", lines[2])
    assert "\r" not in done.stderr
    assert re.search(r"^\s+embedded\s+\d+\.\d chunks/s", done.stdout, re.MULTILINE)


def test_front_matter_fills_filterable_meta_and_a_mismatch_names_the_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "post.mdx").write_text(
        "---\ntitle: Release notes\ncategories: [news]\ndate: 2024-03-01\n---\n\n"
        "# Release notes\n\nThe release adds faster gardens.\n"
    )
    (docs / "old.md").write_text("---\nyear: 2019\n---\n\nThe release of gardens, long ago.\n")
    (docs / "bad.md").write_text("---\nyear: soon\n---\n\nGardens someday.\n")
    config = tmp_path / "rcpkit.toml"
    config.write_text('[ingest.fields]\ncategories = "tag"\n')
    folder = tmp_path / "idx"
    summary = index(folder, docs, "--config", str(config))
    assert count(summary, "indexed") == 2
    assert "front matter year = 'soon' does not fit the int field year" in summary
    assert str(docs / "bad.md") in summary
    for where, expected in [
        ({"field": "tag", "op": "eq", "value": "news"}, ["post.mdx"]),
        ({"field": "year", "op": "eq", "value": 2019}, ["old.md"]),
        ({"field": "year", "op": "eq", "value": 2024}, ["post.mdx"]),
        ({"field": "lang", "op": "exists", "value": True}, []),  # too short to tell
    ]:
        shown = rcpkit(
            "query", "release gardens", "--index", str(folder), *HASHING, "--mode", "sparse",
            "--json", "--filter", json.dumps(where), "--config", str(config),
        )  # fmt: skip
        assert shown.returncode == 0, shown.stderr
        assert [hit["chunk"]["docId"] for hit in json.loads(shown.stdout)["hits"]] == expected


def test_a_moved_corpus_is_rerooted_and_its_old_documents_pruned(
    corpus: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "idx"
    index(folder, corpus)
    moved = corpus.rename(tmp_path / "moved")
    refused = rcpkit("index", str(moved), "--index", str(folder), *HASHING)
    assert refused.returncode == 2
    assert "--reroot if the corpus moved" in refused.stderr
    again = index(folder, moved, "--reroot")
    assert "(0 new, 3 changed)" in again  # same ids, rewritten to cite the new place
    assert count(again, "total") == 3
    assert doc_ids(folder, "concurrent futures pools") == ["pdf/futures.txt"]
    shown = rcpkit("show", "pdf/futures.txt", "--index", str(folder), "--json")
    assert json.loads(shown.stdout)["uri"] == (moved / "pdf" / "futures.txt").as_uri()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.txt").write_text("another corpus entirely\n")
    last = index(folder, tmp_path / "elsewhere", "--reroot")
    assert count(last, "removed") == 3  # everything not under the new root goes
    assert count(last, "total") == 1


def test_config_and_style_files_are_indexed_as_text(tmp_path: Path) -> None:
    """Issue 36: .yml/.yaml/.toml/.css were skipped as unsupported."""
    root = tmp_path / "conf"
    root.mkdir()
    (root / "ci.yml").write_text("steps:\n  - run: pytest zanzibar\n")
    (root / "deploy.yaml").write_text("replicas: 3 zanzibar\n")
    (root / "pyproject.toml").write_text('[project]\nname = "zanzibar"\n')
    (root / "site.css").write_text(".zanzibar { color: red; }\n")
    folder = tmp_path / "idx"
    index(folder, root)
    assert sorted(doc_ids(folder, "zanzibar")) == [
        "ci.yml", "deploy.yaml", "pyproject.toml", "site.css"
    ]  # fmt: skip


def test_the_summary_counts_in_the_singular_and_keeps_its_columns(tmp_path: Path) -> None:
    # Issue 36: "1 documents", "1 files".
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "one.md").write_text("# One\n\nA single note about herons.\n")
    summary = index(tmp_path / "idx", docs)
    # A rate such as "324.1 chunks/s" is no plural count: the count stands alone.
    assert not re.search(r"(?<![\d.])1 (documents|chunks)\b", summary), summary
    assert re.search(r"indexed\s+1 document\s+1 chunk\b", summary), summary
    assert re.search(r"skipped\s+0 files", summary), summary
    columns = {line.index("chunk") for line in summary.splitlines() if " chunk" in line}
    assert len(columns) == 1, summary  # the chunks column stays aligned
