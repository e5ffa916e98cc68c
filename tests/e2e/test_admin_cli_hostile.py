"""`rcpkit show`/`export` with hostile arguments through the real CLI (issue 35)."""

from __future__ import annotations

from pathlib import Path

from test_admin_cli import built, stats  # noqa: F401  (the fixture)
from test_ingest_cli import rcpkit


def test_export_refuses_to_write_over_the_index_it_reads(built: Path) -> None:  # noqa: F811
    before = stats(built)["documents"]
    link = built.parent / "alias.jsonl"
    link.symlink_to(built / "index.sqlite3")
    for output in (built / "index.sqlite3", link, built / "export.jsonl"):
        done = rcpkit("export", "--index", str(built), "--output", str(output))
        assert done.returncode == 2, done.stderr
        assert "write it elsewhere" in done.stderr and "Traceback" not in done.stderr
    assert (built / "index.sqlite3").stat().st_size > 0
    assert stats(built)["documents"] == before


def test_show_answers_hostile_ids_and_offsets_with_a_clear_error(built: Path) -> None:  # noqa: F811
    for doc_id in ("../../etc/passwd", "' OR 1=1 --", "a\nb", "%", "x" * 50_000):
        done = rcpkit("show", doc_id, "--index", str(built))
        assert done.returncode == 2 and "no document" in done.stderr
        assert done.stdout == ""
    for offsets in (["--start", "-1"], ["--end", str(10**30)]):
        done = rcpkit("show", "keep.txt", *offsets, "--index", str(built))
        assert done.returncode == 2 and "must satisfy" in done.stderr
