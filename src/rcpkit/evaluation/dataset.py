"""A BEIR-layout collection: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CorpusDocument", "Dataset", "Qrels", "load_dataset"]

Qrels = dict[str, dict[str, int]]  # query id → document id → graded relevance


@dataclass(frozen=True, slots=True)
class CorpusDocument:
    id: str
    title: str
    text: str
    meta: dict[str, Any]

    @property
    def empty(self) -> bool:
        return not (self.title.strip() or self.text.strip())


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    corpus: list[CorpusDocument]
    queries: dict[str, str]  # only the judged ones, in file order
    qrels: Qrels
    # The qrels may name a document as `rcpkit query` prints it — by a chunk id or a
    # citation's source as well as its id (a questions file, rcpkit.evaluation.questions).
    cited: bool = False

    def half(self, split: str) -> Dataset:
        """The queries of one half of the fixed dev / held-out split (``all``: every one)."""
        from rcpkit.evaluation.split import split_queries

        if split == "all":
            return self
        kept = split_queries(self.queries, split)
        if not kept:
            raise ValueError(f"no judged query falls in the {split} half")
        return Dataset(self.name, self.corpus, {q: self.queries[q] for q in kept},
                       {q: self.qrels[q] for q in kept}, self.cited)  # fmt: skip

    def subset(self, limit: int | None) -> Dataset:
        """The first ``limit`` judged queries (the whole corpus stays: it is the haystack)."""
        if limit is not None and limit < 1:
            raise ValueError(f"a subset keeps at least 1 query, not {limit}")
        if limit is None or limit >= len(self.queries):
            return self
        kept = dict(list(self.queries.items())[:limit])
        return Dataset(self.name, self.corpus, kept, {q: self.qrels[q] for q in kept}, self.cited)


def load_dataset(folder: Path, split: str = "test") -> Dataset:
    """Load ``folder``; queries without a relevant (grade > 0) judgement in ``split`` are left out.

    A query whose judgements are all 0 or negative has nothing to find: every
    run scores 0 on it, so counting it would only shrink every mean alike.
    """
    for name in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (folder / name).is_file():
            raise ValueError(f"{folder} is not a BEIR-layout dataset: {name} is missing")
    qrels = {
        query: grades
        for query, grades in _qrels(folder / "qrels" / f"{split}.tsv").items()
        if any(grade > 0 for grade in grades.values())
    }
    queries = {
        str(row["_id"]): str(row["text"])
        for row in _rows(folder / "queries.jsonl", query=True)
        if str(row["_id"]) in qrels
    }
    if not queries:
        raise ValueError(
            f"no query of {folder / 'queries.jsonl'} has a relevant document in "
            f"{folder / 'qrels' / f'{split}.tsv'} (do the query ids match?)"
        )
    corpus = [
        CorpusDocument(
            str(row["_id"]),
            str(row.get("title") or ""),
            str(row.get("text") or ""),
            dict(row.get("metadata") or {}),
        )
        for row in _rows(folder / "corpus.jsonl")
    ]
    return Dataset(folder.resolve().name, corpus, queries, {q: qrels[q] for q in queries})


def _rows(path: Path, *, query: bool = False) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict) or "_id" not in row:
                raise ValueError(f"{path}:{number}: a row needs an _id")
            if query and not isinstance(row.get("text"), str):
                raise ValueError(f"{path}:{number}: a query needs a text")
            yield row


def _qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        head = next(rows, [])
        if head[:3] != list(_QRELS_HEAD):
            raise ValueError(f"{path}:1: the first row is the header {_HEAD_LINE}")
        for number, row in enumerate(rows, 2):
            if not row or not "".join(row).strip():
                continue
            if len(row) < 3:
                raise ValueError(f"{path}:{number}: a row is query-id, corpus-id and score")
            query, document, score = (cell.strip() for cell in row[:3])
            if not score.lstrip("+-").isdigit():
                raise ValueError(f"{path}:{number}: the score {score!r} is not an integer")
            qrels.setdefault(query, {})[document] = int(score)
    return qrels


_QRELS_HEAD = ("query-id", "corpus-id", "score")
_HEAD_LINE = "\t".join(_QRELS_HEAD)  # BEIR's, tab-separated
