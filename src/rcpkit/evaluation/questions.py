"""A questions file: one JSON line per question and the documents that answer it.

    {"question": "how are BM25 scores saturated?", "expected": ["bm25.md"]}
    {"question": "what is RRF?", "expected": "hybrid-fusion.md", "id": "rrf"}

For a corpus that is already indexed (``rcpkit index DIR``), where writing a
BEIR collection would mean exporting it first. ``expected`` names documents
the way ``rcpkit query`` prints them — a document id, a chunk id
(``guide.md#3``) or a citation's source — and each one named is relevant
(binary relevance, grade 1). The corpus is the server's: the dataset has none,
so there is no in-run BM25 baseline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rcpkit.evaluation.dataset import Dataset, Qrels

__all__ = ["load_questions"]


def load_questions(path: Path) -> Dataset:
    """Read ``path``; a malformed line is a ValueError naming ``path:line``."""
    queries: dict[str, str] = {}
    qrels: Qrels = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        id, question, expected = _question(line, f"{path}:{number}")
        if id is None:
            id = str(number)
        if id in queries:
            raise ValueError(f"{path}:{number}: the id {id!r} is already used by an earlier line")
        queries[id] = question
        qrels[id] = dict.fromkeys(expected, 1)
    if not queries:
        raise ValueError(f"{path}: no questions (one JSON object a line: {_SHAPE})")
    return Dataset(path.stem, [], queries, qrels, cited=True)


def _question(line: str, where: str) -> tuple[str | None, str, list[str]]:
    try:
        row: Any = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not JSON ({error.msg}); each line is {_SHAPE}") from None
    if not isinstance(row, dict):
        raise ValueError(f"{where}: not a JSON object; each line is {_SHAPE}")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f'{where}: "question" must be a non-empty string')
    expected = row.get("expected")
    if isinstance(expected, str):
        expected = [expected]
    if (
        not isinstance(expected, list)
        or not expected
        or not all(isinstance(item, str) and item.strip() for item in expected)
    ):
        raise ValueError(
            f'{where}: "expected" must be a document id (as rcpkit query prints it) '
            "or a non-empty list of them"
        )
    id = row.get("id")
    if id is not None and (isinstance(id, bool) or not isinstance(id, str | int) or id == ""):
        raise ValueError(f'{where}: "id" must be a non-empty string or an integer')
    return (None if id is None else str(id)), question, [item.strip() for item in expected]


_SHAPE = '{"question": "...", "expected": ["doc-id", ...]}'
