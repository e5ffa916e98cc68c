"""Loaders and the walk: which files become documents, with which ids, text and titles."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from rcpkit.engine.ingest import (
    SUPPORTED_EXTENSIONS,
    IngestOptions,
    Skipped,
    SourceDocument,
    iter_documents,
)


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _documents(*paths: Path) -> list[SourceDocument]:
    return [item for item in iter_documents(list(paths)) if isinstance(item, SourceDocument)]


def _skips(*paths: Path) -> list[Skipped]:
    return [item for item in iter_documents(list(paths)) if isinstance(item, Skipped)]


def _tree(root: Path) -> Path:
    _write(root / "guides" / "setup.md", "# Setup\n\nRun the installer.\n")
    _write(root / "guides" / "zeta.txt", "Last in name order.\n")
    _write(root / "alpha.md", "Intro without a heading.\n")
    _write(root / "src" / "tool.py", "def main() -> None:\n    print('hi')\n")
    _write(root / ".hidden" / "secret.md", "# Secret\n")
    _write(root / ".notes.md", "# Hidden file\n")
    _write(root / "node_modules" / "pkg" / "readme.md", "# Vendored\n")
    _write(root / "__pycache__" / "tool.md", "# Cache\n")
    return root


def test_ids_are_posix_paths_relative_to_the_root_in_sorted_order(tmp_path: Path) -> None:
    documents = _documents(_tree(tmp_path / "docs"))
    assert [d.id for d in documents] == [
        "alpha.md",
        "guides/setup.md",
        "guides/zeta.txt",
        "src/tool.py",
    ]


def test_walking_twice_gives_identical_documents(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs")
    assert list(iter_documents([root])) == list(iter_documents([root]))


def test_hidden_and_junk_entries_are_pruned_without_a_skip(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs")
    seen = {str(item.path) for item in _skips(root)} | {d.uri for d in _documents(root)}
    assert not any("secret" in s or "notes" in s or "Vendored" in s for s in seen)
    assert not any("node_modules" in s or "__pycache__" in s for s in seen)


def test_a_file_root_is_identified_by_its_own_name(tmp_path: Path) -> None:
    path = _write(tmp_path / "deep" / "notes.md", "# Notes\n\nBody.\n")
    (document,) = _documents(path)
    assert document.id == "notes.md"
    assert document.uri == path.resolve().as_uri()


def test_file_metadata_has_path_extension_rfc3339_mtime_and_hash(tmp_path: Path) -> None:
    path = _write(tmp_path / "a" / "Read.MD", "# Title\n\nBody text.\n")
    (document,) = _documents(tmp_path)
    assert document.meta["path"] == "a/Read.MD"
    assert document.meta["ext"] == ".md"
    mtime = document.meta["mtime"]
    assert isinstance(mtime, str)
    assert mtime.endswith("Z")
    assert len(mtime) == len("2024-01-01T00:00:00Z")
    # The bytes and the ingest settings: changing a setting re-reads every file.
    fingerprint = IngestOptions().fingerprint()
    assert (
        document.content_hash == hashlib.sha256(path.read_bytes() + b"\0" + fingerprint).hexdigest()
    )
    assert document.pages is None


def test_markdown_title_is_the_first_level_one_heading(tmp_path: Path) -> None:
    text = "Preface line.\n\n## Not this\n\n```\n# not a heading in a fence\n```\n\n# Real title\n"
    (document,) = _documents(_write(tmp_path / "doc.md", text))
    assert document.title == "Real title"
    assert document.text == text


def test_mkdocs_anchors_and_include_lines_are_blanked_and_offsets_stay_raw(tmp_path: Path) -> None:
    """Issue 36: `{ #advanced-middleware }` stayed in titles, `{* ... *}` lines were indexed."""
    text = (
        "# Advanced Middleware { #advanced-middleware }\n\nAdd middleware.\n\n"
        "{* ../../docs_src/advanced_middleware/tutorial001.py hl[3] *}\n\n"
        '## Other { .note }\n\n--8<-- "snippets/other.md"\n\nSet {x} stays.\n'
    )
    (document,) = _documents(_write(tmp_path / "doc.md", text))
    assert document.title == "Advanced Middleware"
    assert len(document.text) == len(text)
    assert "advanced-middleware" not in document.text and "docs_src" not in document.text
    assert ".note" not in document.text and "snippets" not in document.text
    assert "Add middleware." in document.text and "Set {x} stays." in document.text
    assert document.text.index("## Other") == text.index("## Other")


def test_an_attribute_list_in_fenced_code_is_code_not_a_heading_anchor(tmp_path: Path) -> None:
    text = "# Setup { #setup }\n\n```sh\n# install it { #not-an-anchor }\n```\n"
    (document,) = _documents(_write(tmp_path / "doc.md", text))
    assert "{ #setup }" not in document.text
    assert "# install it { #not-an-anchor }" in document.text


def test_title_falls_back_to_the_file_stem(tmp_path: Path) -> None:
    (document,) = _documents(_write(tmp_path / "release-notes.txt", "Plain words.\n"))
    assert document.title == "release-notes"


def test_code_files_are_tagged_code_and_prose_is_tagged_text(tmp_path: Path) -> None:
    _write(tmp_path / "lib.rs", "fn main() {}\n")
    _write(tmp_path / "run.sh", "echo hi\n")
    _write(tmp_path / "read.md", "Words.\n")
    modalities = {d.id: d.modality for d in _documents(tmp_path)}
    assert modalities == {"lib.rs": "code", "run.sh": "code", "read.md": "text"}


def test_a_binary_file_is_skipped_with_a_reason(tmp_path: Path) -> None:
    _write(tmp_path / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    _write(tmp_path / "blob.py", b"\xc3\x28\xa0\xa1" * 100)
    _write(tmp_path / "fake-bom.md", b"\xff\xfe" + b"\x01\x00\x02\x00\x1b\x00" * 100)
    skips = {s.path.name: s.reason for s in _skips(tmp_path)}
    assert "binary" in skips["image.txt"]
    assert "binary" in skips["blob.py"]
    assert "binary" in skips["fake-bom.md"]


def test_utf16_with_a_byte_order_mark_is_decoded(tmp_path: Path) -> None:
    _write(tmp_path / "notepad.txt", "Hello from Windows\r\n".encode("utf-16"))
    (document,) = _documents(tmp_path)
    assert document.text == "Hello from Windows\n"


def test_empty_and_whitespace_only_files_are_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "empty.md", "")
    _write(tmp_path / "blank.txt", " \n\t\n\n")
    skips = {s.path.name: s.reason for s in _skips(tmp_path)}
    assert set(skips) == {"empty.md", "blank.txt"}
    assert all("empty" in reason for reason in skips.values())


def test_unknown_extensions_and_missing_paths_are_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "archive.xyz", "data\n")
    _write(tmp_path / "Makefile", "all:\n")
    reasons = {s.path.name: s.reason for s in _skips(tmp_path, tmp_path / "missing")}
    assert "unsupported extension '.xyz'" in reasons["archive.xyz"]
    assert reasons["Makefile"] == "no file extension"
    assert reasons["missing"] == "not found"


def test_an_unreadable_file_is_skipped_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = _write(tmp_path / "locked.md", "# Locked\n")
    _write(tmp_path / "open.md", "# Open\n")
    real_read_bytes = Path.read_bytes

    # Root reads any file whatever its mode, so the refusal is simulated.
    def read_bytes(self: Path) -> bytes:
        if self.name == locked.name:
            raise PermissionError(13, "Permission denied")
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    items = list(iter_documents([tmp_path]))
    assert isinstance(items[0], Skipped)
    assert items[0].reason == "unreadable (Permission denied)"
    assert isinstance(items[1], SourceDocument)


def test_text_is_utf8_with_the_bom_removed_and_newlines_normalised(tmp_path: Path) -> None:
    _write(tmp_path / "bom.md", "\ufeff# Café\r\n\r\nLine two\rthree\n".encode())
    (document,) = _documents(tmp_path)
    assert document.text == "# Café\n\nLine two\nthree\n"
    assert document.title == "Café"


def test_latin1_falls_back_for_txt_but_not_for_markdown(tmp_path: Path) -> None:
    _write(tmp_path / "legacy.txt", "Caf\xe9 cr\xe8me\n".encode("latin-1"))
    _write(tmp_path / "legacy.md", "Caf\xe9 cr\xe8me\n".encode("latin-1"))
    (document,) = _documents(tmp_path)
    assert document.id == "legacy.txt"
    assert document.text == "Café crème\n"
    (skip,) = _skips(tmp_path)
    assert skip.path.name == "legacy.md"
    assert "UTF-8" in skip.reason


def test_a_file_listed_twice_is_ingested_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.md", "# One\n")
    items = list(iter_documents([tmp_path, path]))
    assert [type(item) for item in items] == [SourceDocument, Skipped]


def test_files_over_the_size_limit_are_skipped_before_reading(tmp_path: Path) -> None:
    _write(tmp_path / "big.txt", "word " * 1000)
    (skip,) = iter_documents([tmp_path], max_file_bytes=100)
    assert isinstance(skip, Skipped)
    assert "too large" in skip.reason


def test_every_supported_extension_has_a_loader() -> None:
    assert {".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".jsonl"} <= SUPPORTED_EXTENSIONS
    assert {".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".rb", ".sh"} <= (
        SUPPORTED_EXTENSIONS
    )


def _beir_rows() -> str:
    rows = [
        json.dumps({"_id": "doc-1", "title": "Refunds", "text": "Refunds take 30 days.", "y": 1}),
        '{"_id": "doc-2", "text": "broken',
        json.dumps(["not", "an", "object"]),
        "",
        json.dumps({"_id": 7, "title": "Numeric id", "text": "Seven."}),
        json.dumps({"title": "No id", "text": "Orphan."}),
        json.dumps({"_id": "doc-1", "text": "Duplicate id."}),
        json.dumps({"_id": "title-only", "title": "Only a title", "text": ""}),
    ]
    return "\n".join(rows) + "\n"


def test_beir_rows_become_documents_and_bad_rows_skips_with_line_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", _beir_rows())
    items = list(iter_documents([path]))
    documents = [item for item in items if isinstance(item, SourceDocument)]
    skips = [item for item in items if isinstance(item, Skipped)]
    # A row without the id field is named by its line (JSON Lines need not be BEIR).
    assert [d.id for d in documents] == ["doc-1", "7", "corpus.jsonl#6", "title-only"]
    assert [s.line for s in skips] == [2, 3, 7]
    assert all(s.reason.startswith(f"line {s.line}: ") for s in skips)
    assert "duplicate" in skips[-1].reason


def test_a_beir_row_carries_its_title_fields_uri_and_row_hash(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", _beir_rows())
    first = _documents(path)[0]
    assert first.text == "Refunds take 30 days."
    assert first.title == "Refunds"
    assert first.meta["title"] == "Refunds"
    assert first.meta["y"] == 1
    assert first.uri == path.resolve().as_uri() + "#doc-1"
    row = _beir_rows().split("\n")[0].encode() + b"\0" + IngestOptions().fingerprint()
    assert first.content_hash == hashlib.sha256(row).hexdigest()


def test_a_title_only_beir_row_uses_its_title_as_text(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", _beir_rows())
    assert _documents(path)[-1].text == "Only a title"


def test_an_empty_jsonl_file_is_skipped(tmp_path: Path) -> None:
    (skip,) = _skips(_write(tmp_path / "corpus.jsonl", "\n\n"))
    assert "empty" in skip.reason


def test_a_thousand_small_markdown_files_cost_a_few_file_calls_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Work, not seconds: each file is read once and stat'ed at most twice, and each
    # folder listed once, so loading grows linearly with the tree; benchmarks/walk_files.py
    # times it against reading the same files in the same run.
    for index in range(1000):
        _write(
            tmp_path / f"part{index // 100}" / f"note{index:04}.md",
            f"# Note {index}\n\nSome text about topic {index}.\n\n## Details\n\nMore words.\n",
        )
    calls = _count_calls(monkeypatch, (Path, "read_bytes"), (Path, "stat"), (os, "scandir"))
    documents = _documents(tmp_path)
    assert len(documents) == 1000
    assert documents[0].id == "part0/note0000.md"
    assert calls["read_bytes"] == 1000
    assert calls["scandir"] == 11  # the root and its ten folders
    assert calls["stat"] <= 2 * 1000 + 10, calls  # walk + source; a few for the root


def _count_calls(monkeypatch: pytest.MonkeyPatch, *targets: tuple[object, str]) -> dict[str, int]:
    """Count calls to each ``(owner, name)`` while still doing the real work."""
    calls = dict.fromkeys((name for _, name in targets), 0)
    for owner, name in targets:
        real = getattr(owner, name)

        def counted(*args: object, _real: Any = real, _name: str = name, **kw: object) -> Any:
            calls[_name] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(owner, name, counted)
    return calls
