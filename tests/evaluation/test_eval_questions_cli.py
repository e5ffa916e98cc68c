"""``rcpkit eval QUESTIONS.jsonl``: questions and the documents that answer them, over an
index built by ``rcpkit index`` (issue 36: not only BEIR layout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ir_measures")

HASHING = ("--embedder", "hashing:64")

SAMPLES = str(resources.files("rcpkit") / "samples")
# Each expected document checked by hand against src/rcpkit/samples: it is the one
# note on the question's subject. Expected names come in every form `rcpkit query`
# prints: a document id, a chunk id, a citation source; one string or a list.
QUESTIONS: list[dict[str, Any]] = [
    {"question": "reciprocal rank fusion of a lexical and a dense ranked list",
     "expected": ["hybrid-fusion.md"]},
    {"question": "term frequency saturation k1 and document length normalisation b",
     "expected": "bm25.md#0"},
    {"question": "maximal marginal relevance against near-duplicates",
     "expected": "diversity-mmr.md", "id": "mmr"},
    {"question": "indirect prompt injection in retrieved text",
     "expected": ["prompt-injection.md"]},
    {"question": "SPLADE masked language model vocabulary expansion",
     "expected": ["learned-sparse.md"]},
    # Deliberately wrong: chunking is not about cross-encoders, so this one scores below 1.
    {"question": "cross-encoder reranking of the top candidates", "expected": ["chunking.md"]},
]  # fmt: skip


def rcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, with the developer's RCPKIT_EMBEDDER / RCPKIT_INDEX unset."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for name in ("RCPKIT_EMBEDDER", "RCPKIT_INDEX"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("questions") / "idx"
    built = rcpkit("index", SAMPLES, "--index", str(folder), *HASHING)
    assert built.returncode == 0, built.stderr
    return folder


def _write(path: Path, rows: list[Any]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_eval_scores_a_questions_file_against_an_indexed_folder(
    index: Path, tmp_path: Path
) -> None:
    questions = _write(tmp_path / "questions.jsonl", QUESTIONS)
    out = tmp_path / "eval.json"
    ran = rcpkit("eval", str(questions), "--index", str(index), *HASHING,
                 "--stages", "default,sparse", "--no-progress", "--json", str(out))  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "6 judged queries" in ran.stdout
    assert "no baseline" in ran.stdout and "÷ BM25" not in ran.stdout
    record = json.loads(out.read_text())
    assert record["baseline"] is None
    runs = {run["key"]: run for run in record["runs"]}
    assert set(runs) == {"default", "sparse"}
    sparse = runs["sparse"]
    per_query = sparse["perQuery"]
    assert set(per_query) == {"1", "2", "mmr", "4", "5", "6"}  # line numbers, or the id given
    for query in ("1", "2", "mmr", "4", "5"):
        # BM25 ranks the one note on the subject first, whichever way it is named.
        assert per_query[query]["RR@10"] == 1.0, (query, sparse["ranking"][query][:3])
    assert sparse["ranking"]["2"][0] == "bm25.md#0"  # the chunk id names its document
    wrong = per_query["6"]
    assert wrong["RR@10"] < 1.0 and wrong["nDCG@10"] < 1.0
    assert sparse["ranking"]["6"][0] == "reranking.md"
    # The means are over every question, the wrong one included.
    assert sparse["aggregate"]["RR@10"] == pytest.approx((5 + wrong["RR@10"]) / 6)


def test_a_malformed_questions_line_is_named(index: Path, tmp_path: Path) -> None:
    cases = {
        "not json": ({"question": "q", "expected": "a.md"}, "{question: 1}", ":2: not JSON"),
        "no question": ({"expected": "a.md"}, None, ':1: "question" must be a non-empty string'),
        "no expected": ({"question": "q", "expected": []}, None, ':1: "expected" must be'),
        "not an object": ('["q", "a.md"]', None, ":1: not a JSON object"),
    }
    for name, (first, second, message) in cases.items():
        rows = [first] + ([second] if second is not None else [])
        path = _write(tmp_path / f"{name.replace(' ', '-')}.jsonl", rows)
        ran = rcpkit("eval", str(path), "--index", str(index), *HASHING, "--no-progress")
        assert ran.returncode == 2, (name, ran.stderr)
        assert f"{path}{message}" in ran.stderr, (name, ran.stderr)
        assert len(ran.stderr.strip().splitlines()) == 1, ran.stderr


def test_a_questions_file_needs_an_index_and_no_baseline_options(tmp_path: Path) -> None:
    questions = _write(tmp_path / "q.jsonl", QUESTIONS[:1])
    missing = rcpkit("eval", str(questions), "--index", str(tmp_path / "none"), "--no-progress")
    assert missing.returncode == 2
    assert "no index at" in missing.stderr
    ratio = rcpkit("eval", str(questions), "--min-ratio", "1.1", "--no-progress")
    assert ratio.returncode == 2
    assert "questions file" in ratio.stderr and "--min-ratio" in ratio.stderr
