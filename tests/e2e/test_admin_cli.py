"""`rcpkit stats`, `show`, `delete`, `export`, `backup` and `--version` through the real CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from test_ingest_cli import HASHING, doc_ids, index, rcpkit

import rcpkit as package


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """An index of its own, for a test that writes to it."""
    return _build(tmp_path)


@pytest.fixture(scope="module")
def read_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index for the tests that only read it (stats, show, query, export): one
    `rcpkit index` run instead of one each. A test that writes takes ``built``."""
    return _build(tmp_path_factory.mktemp("read-only"))


def _build(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "drafts").mkdir(parents=True)
    (docs / "page.html").write_text(
        "<html><head><title>Uuid</title></head><body><nav>Menu</nav><main>"
        "<h1>Uuid</h1><p>The <b>uuid4</b> function makes random identifiers.</p>"
        "</main></body></html>"
    )
    (docs / "drafts" / "a.md").write_text("# A\n\nDraft about otters.\n")
    (docs / "drafts" / "b.md").write_text("# B\n\nDraft about beavers.\n")
    (docs / "keep.txt").write_text("Kept text about herons.\n")
    folder = tmp_path / "idx"
    index(folder, docs)
    return folder


def stats(folder: Path) -> dict[str, Any]:
    done = rcpkit("stats", "--index", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_stats_reports_what_the_index_holds(read_only: Path) -> None:
    figures = stats(read_only)
    assert figures["documents"] == 4
    assert figures["ingested"] == 4
    assert figures["chunks"] >= 4
    assert figures["tenants"] == 1
    assert figures["size_bytes"] > 0
    assert figures["embedder"].startswith("rcpkit-hashing")
    assert figures["root"].endswith("docs")
    assert figures["last_write"].endswith("Z")
    shown = rcpkit("stats", "--index", str(read_only))
    assert "documents    4 (4 from `rcpkit index`)" in shown.stdout


def test_last_write_is_the_last_commit_and_reads_do_not_move_it(built: Path) -> None:
    # Issue 36: it was the file's mtime, which opening and reading the index moves.
    before = stats(built)["last_write"]
    time.sleep(1.1)  # the stamp has a one-second resolution
    found = rcpkit("query", "herons", "--index", str(built), *HASHING, "--mode", "sparse")
    assert found.returncode == 0, found.stderr
    assert stats(built)["last_write"] == before
    (built.parent / "docs" / "new.md").write_text("# New\n\nA note about otters.\n")
    index(built, built.parent / "docs")
    assert stats(built)["last_write"] > before


def test_stats_on_a_mistyped_index_is_an_error(tmp_path: Path) -> None:
    done = rcpkit("stats", "--index", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert "no index at" in done.stderr
    assert not (tmp_path / "nope").exists()


def test_an_html_citation_slice_is_printed_by_show(read_only: Path) -> None:
    found = rcpkit(
        "query", "uuid4 random identifiers", "--index", str(read_only), *HASHING, "-k", "1",
        "--mode", "sparse", "--json",
    )  # fmt: skip
    hit = json.loads(found.stdout)["hits"][0]
    citation = hit["citation"]
    assert hit["meta"]["textOf"] == "extracted"  # offsets index the extracted text
    shown = rcpkit(
        "show", hit["chunk"]["docId"], "--index", str(read_only),
        "--start", str(citation["start"]), "--end", str(citation["end"]),
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.rstrip("\n") == hit["text"]
    assert "<b>" not in shown.stdout


def test_delete_by_id_and_by_glob_commits_one_version_each(built: Path) -> None:
    before = stats(built)["version"]
    done = rcpkit("delete", "--path", "drafts/*", "--index", str(built), *HASHING)
    assert done.returncode == 0, done.stderr
    assert "2 documents deleted" in done.stdout
    assert stats(built)["version"] == before + 1
    assert doc_ids(built, "draft otters beavers") == []
    one = rcpkit("delete", "keep.txt", "--index", str(built), *HASHING)
    assert one.returncode == 0, one.stderr
    assert stats(built)["documents"] == 1
    missing = rcpkit("delete", "nope.txt", "--index", str(built), *HASHING)
    assert missing.returncode == 1
    assert "no document 'nope.txt'" in missing.stderr
    assert stats(built)["version"] == before + 2  # nothing matched: no version


def test_export_writes_every_document_as_json_lines(read_only: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    done = rcpkit("export", "--index", str(read_only), "--output", str(out))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["_id"] for row in rows) == [
        "drafts/a.md", "drafts/b.md", "keep.txt", "page.html"
    ]  # fmt: skip
    again = rcpkit("index", str(out), "--index", str(tmp_path / "copy"), *HASHING)
    assert again.returncode == 0, again.stderr
    assert "indexed          4 documents" in again.stdout


def test_a_backup_taken_while_a_server_writes_is_a_consistent_index(
    spawn: Any, built: Path, tmp_path: Path
) -> None:
    server = spawn("--engine", "index", "--index", str(built), *HASHING)
    server.request(1, "initialize", {"protocolVersion": 1})
    added = server.request(
        2, "index/add", {"documents": [{"id": "live", "text": "written while serving"}]}
    )
    assert "result" in added
    copy = tmp_path / "copy"
    done = rcpkit("backup", str(copy), "--index", str(built))
    assert done.returncode == 0, done.stderr
    assert server.request(3, "ping", {})["result"] is not None  # still serving
    copied = stats(copy)
    assert copied["documents"] == 5
    assert copied["version"] == stats(built)["version"]
    assert doc_ids(copy, "written while serving") == ["live"]
    refused = rcpkit("backup", str(copy), "--index", str(built))
    assert refused.returncode == 2
    assert "not empty" in refused.stderr


def test_version_prints_the_package_version() -> None:
    done = rcpkit("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"rcpkit {package.__version__}"


def test_export_refuses_to_write_over_the_index_it_reads(built: Path, tmp_path: Path) -> None:
    # Opening --output for writing truncated an index file named as the output
    # (directly or through a symlink) before a row of it was read.
    target = next(built.glob("*.sqlite3"))
    size = target.stat().st_size
    link = tmp_path / "innocent.jsonl"
    link.symlink_to(target)
    for output in (target, link, built / "export.jsonl"):
        done = rcpkit("export", "--index", str(built), "--output", str(output))
        assert done.returncode != 0
        assert "write it elsewhere" in done.stderr
    assert target.stat().st_size == size
    assert not (built / "export.jsonl").exists()
    assert stats(built)["documents"] == 4


@pytest.mark.heavy  # 3,000 documents through MiniLM, then 30 runs of the CLI
@pytest.mark.parametrize(
    ("embedder", "documents", "runs"),
    [((), 3000, 30), (HASHING, 20, 8)],
    ids=["default", "hashing"],
)
def test_delete_by_glob_exits_zero_every_run(
    tmp_path: Path, embedder: tuple[str, ...], documents: int, runs: int
) -> None:
    """Issue 36.1: `delete` exited while the background model load was inside
    onnxruntime's session init: "terminate called without an active exception",
    exit 134. A few thousand documents put the exit inside that window (measured:
    about 1 abort in 10 runs before the fix on 3,000 documents, 5 in 8 on a user's
    corpus), so 30 runs fail before the fix with high probability, not certainty."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(documents):
        (docs / f"n{number}.txt").write_text(f"note {number} about otters and rivers\n")
    folder = tmp_path / "idx"
    built = rcpkit("index", str(docs), "--index", str(folder), *embedder)
    assert built.returncode == 0, built.stderr
    for _ in range(runs):
        done = rcpkit("delete", "--path", "nomatch*", "--index", str(folder), "--dry-run")
        assert done.returncode == 0, done.stderr
        assert "terminate called" not in done.stderr


def test_delete_quiet_prints_the_summary_only_in_the_singular(built: Path) -> None:
    """Issue 36.6: `--quiet` for `delete --path`, and "1 document", not "1 documents"."""
    dry = rcpkit("delete", "--path", "drafts/*", "--index", str(built), "--dry-run", "--quiet")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == ["would delete 2 documents"]
    done = rcpkit("delete", "--path", "drafts/a*", "--index", str(built), *HASHING, "-q")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"1 document deleted (version {stats(built)['version']})"]


def test_query_filter_shorthand_help_and_errors(read_only: Path) -> None:
    """Issue 36.6: FIELD=VALUE filters, a clear bad-filter error, valid fields listed, -k help."""
    ask = ("query", "draft otters beavers herons", "--index", str(read_only), *HASHING, "--json")
    short = rcpkit(*ask, "--mode", "sparse", "--filter", "folders=drafts")
    assert short.returncode == 0, short.stderr
    found = {hit["chunk"]["docId"] for hit in json.loads(short.stdout)["hits"]}
    assert found == {"drafts/a.md", "drafts/b.md"}
    bad = rcpkit(*ask, "--filter", "drafts")
    assert bad.returncode == 2
    assert "Expecting value" not in bad.stderr
    assert "FIELD=VALUE" in bad.stderr and '"op":"contains"' in bad.stderr
    unknown = rcpkit(*ask, "--filter", "nope=x")
    assert unknown.returncode == 1
    assert "advertised: " in unknown.stderr and "folders" in unknown.stderr
    helped = rcpkit("query", "--help")
    assert "how many hits" in helped.stdout
    assert "FIELD=VALUE" in helped.stdout


def test_show_takes_the_chunk_id_query_prints(read_only: Path) -> None:
    """Issue 36.6: `rcpkit show doc#N` shows the document with that chunk marked."""
    found = rcpkit(
        "query", "herons", "--index", str(read_only), *HASHING, "-k", "1", "--mode", "sparse",
        "--json",
    )  # fmt: skip
    hit = json.loads(found.stdout)["hits"][0]
    assert hit["id"] == "keep.txt#0"
    shown = rcpkit("show", hit["id"], "--index", str(read_only))
    assert shown.returncode == 0, shown.stderr
    start, end = hit["citation"]["start"], hit["citation"]["end"]
    assert f">>> chunk keep.txt#0 [{start}:{end}]\n{hit['text']}\n<<< end" in shown.stdout
    missing = rcpkit("show", "keep.txt#9", "--index", str(read_only))
    assert missing.returncode == 2
    assert "has no chunk 9" in missing.stderr
