"""Bad settings and mistyped paths through the real CLI: one clear line, nothing created."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_support import HASHING, rcpkit


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("rcpkit:")]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.fixture
def built(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text about rivers.\n")
    folder = tmp_path / "idx"
    done = rcpkit("index", str(docs), "--index", str(folder), *HASHING)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ('max_k = "lots"', "[engine] max_k = 'lots' is not allowed; it takes an integer ≥ 1"),
        ("max_k = -5", "[engine] max_k = -5 is not allowed; it takes an integer ≥ 1"),
        ('embedder = "nope"', "embedder = 'nope' is not allowed; it takes 'minilm', 'hashing:"),
        ('graph = "magic"', "graph = 'magic' is not allowed; it takes one of 'spacy', 'regex'"),
        ("max_kk = 3", "unknown setting 'max_kk'"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_key_the_value_and_what_is_allowed(
    built: Path, tmp_path: Path, setting: str, expected: str
) -> None:
    config = tmp_path / "rcpkit.toml"
    config.write_text(f"[engine]\n{setting}\n")
    done = rcpkit("query", "rivers", "--index", str(built), "--config", str(config))
    line = one_error_line(done)
    assert str(config) in line
    assert expected in line


def test_an_unknown_embedder_flag_is_refused_before_anything_runs(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("text\n")
    done = rcpkit("index", str(docs), "--index", str(tmp_path / "idx"), "--embedder", "nope")
    assert "--embedder embedder = 'nope' is not allowed" in one_error_line(done)
    assert not (tmp_path / "idx").exists()


def test_a_bad_ingest_setting_is_refused_too(built: Path, tmp_path: Path) -> None:
    config = tmp_path / "rcpkit.toml"
    config.write_text('[ingest]\ntable_mode = "rows"\n')
    done = rcpkit("index", str(tmp_path / "docs"), "--index", str(built), "--config", str(config))
    assert "table_mode = 'rows' is not allowed; it takes one of 'row'" in one_error_line(done)


@pytest.mark.parametrize("command", [["query", "rivers"], ["serve", "--stdio"]])
def test_a_mistyped_index_is_an_error_and_creates_nothing(
    built: Path, tmp_path: Path, command: list[str]
) -> None:
    typo = tmp_path / "idz"
    done = rcpkit(*command, "--index", str(typo), *HASHING)
    assert f"no index at {typo}" in one_error_line(done)
    assert not typo.exists()


REGISTRY_RETIRED = "rcpkit: the shard registry was retired; run SolrCloud: see docs/solr.md"


@pytest.mark.parametrize(
    "command",
    [
        ("index", "{docs}", "--index", "{index}", *HASHING),
        ("serve", "--index", "{index}", *HASHING),
        ("stats", "--index", "{index}"),
        ("query", "rivers", "--index", "{index}", *HASHING),
        ("db", "status"),
    ],
    ids=["index", "serve", "stats", "query", "db"],
)
def test_a_shard_registry_store_is_refused_with_where_to_go_instead(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # Issue 48 item 6: `--store shards.toml` (issue 32's registry) is retired; one way
    # past one machine remains, SolrCloud. A registry as its users wrote it:
    registry = tmp_path / "shards.toml"
    registry.write_text('[[shard]]\nname = "s0"\nurl = "postgres://127.0.0.1:1/rcpkit"\n')
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha text about rivers.\n")
    index = tmp_path / "idx"
    words = [word.format(docs=docs, index=index) for word in command]
    done = rcpkit(*words, "--store", str(registry))
    assert one_error_line(done) == REGISTRY_RETIRED
    assert not index.exists()


def test_a_shard_registry_in_the_config_file_is_refused_the_same_way(tmp_path: Path) -> None:
    config = tmp_path / "rcpkit.toml"
    config.write_text('[engine]\nstore = "shards.json"\n')
    done = rcpkit("stats", "--index", str(tmp_path / "idx"), "--config", str(config))
    assert one_error_line(done) == REGISTRY_RETIRED
