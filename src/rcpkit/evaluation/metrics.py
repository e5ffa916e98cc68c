"""IR measures over ranked lists, computed by ``ir-measures`` (trec_eval underneath).

Appendix F's measures with linear gains: nDCG@10, Recall@50 (the one the spec
asks a harness to report), Recall@100, MRR@10 and MAP. Every judged query
counts: one a run has nothing for scores 0 (trec_eval's ``-c``), so a server
cannot look better by failing hard queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from rcpkit.evaluation.dataset import Qrels

__all__ = ["MEASURES", "PRIMARY", "Run", "Scores", "ranked_run", "score_run"]

MEASURES: tuple[str, ...] = ("nDCG@10", "R@50", "R@100", "RR@10", "AP")
PRIMARY = "nDCG@10"

Run = dict[str, dict[str, float]]  # query id → document id → score (higher first)


@dataclass(frozen=True, slots=True)
class Scores:
    aggregate: dict[str, float]  # measure → mean over every judged query
    per_query: dict[str, dict[str, float]]  # query id → measure → value

    def __getitem__(self, measure: str) -> float:
        return self.aggregate[measure]


def ranked_run(ranking: Mapping[str, Sequence[str]]) -> Run:
    """A run from ranked ids: strictly decreasing scores keep the order exact.

    trec_eval sorts by score and breaks ties by document id, so the servers'
    own scores (ties, other scales) would reorder a list; the rank alone does not.
    """
    return {
        query: {doc: float(len(ids) - rank) for rank, doc in enumerate(dict.fromkeys(ids))}
        for query, ids in ranking.items()
    }


def score_run(qrels: Qrels, run: Run, measures: Sequence[str] = MEASURES) -> Scores:
    """Per-query and mean values of ``measures`` over every query in ``qrels``."""
    import ir_measures

    parsed = [ir_measures.parse_measure(name) for name in measures]
    names = {measure: str(measure) for measure in parsed}
    per_query: dict[str, dict[str, float]] = {
        query: dict.fromkeys(measures, 0.0) for query in qrels
    }
    judged_run = {query: docs for query, docs in run.items() if query in qrels and docs}
    metric: Any
    for metric in ir_measures.iter_calc(parsed, qrels, judged_run):
        per_query[metric.query_id][names[metric.measure]] = float(metric.value)
    aggregate = {
        name: fmean(values[name] for values in per_query.values()) if per_query else 0.0
        for name in measures
    }
    return Scores(aggregate, per_query)
