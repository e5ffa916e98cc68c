"""Retrieval quality on a BEIR-layout collection (Appendix F): nDCG@10, Recall@50, MRR@10.

Metrics are pure functions over ranked ids and graded judgements; the harness
runs the engine's own ``retrieve`` per mode so every figure is comparable.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["load_qrels", "load_queries", "mrr_at", "ndcg_at", "recall_at"]

Judgements = Mapping[str, int]  # doc id → graded relevance (> 0 is relevant)


def ndcg_at(ranked: Sequence[str], judged: Judgements, k: int = 10) -> float:
    """nDCG@k with linear gains: DCG = Σ rel_i / log2(i + 1) (Appendix F)."""
    dcg = sum(judged.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted((gain for gain in judged.values() if gain > 0), reverse=True)[:k]
    best = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / best if best else 0.0


def recall_at(ranked: Sequence[str], judged: Judgements, k: int = 50) -> float:
    relevant = {doc for doc, gain in judged.items() if gain > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], judged: Judgements, k: int = 10) -> float:
    for rank, doc in enumerate(ranked[:k], 1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def load_queries(folder: Path) -> dict[str, str]:
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                queries[str(row["_id"])] = str(row["text"])
    return queries


def load_qrels(folder: Path, split: str = "test") -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return qrels
