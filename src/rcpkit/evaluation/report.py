"""What ``rcpkit eval`` prints and writes: a table, JSON, a bar chart, a per-query diff.

The JSON file is the record a later ``--compare`` reads: per stage, the
aggregate and per-query values of every measure and the ranked document ids.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, median
from typing import Any

from rcpkit.evaluation.metrics import MEASURES, PRIMARY, Scores
from rcpkit.evaluation.split import split_of, split_queries

__all__ = [
    "Evaluation",
    "Row",
    "compare",
    "load_evaluation",
    "plot",
    "render_comparison",
    "render_table",
    "to_json",
]

_HALF_LABELS = {"dev": "dev", "heldout": "held-out"}
_LABELS = {"nDCG@10": "nDCG@10", "R@50": "Recall@50", "R@100": "Recall@100",
           "RR@10": "MRR@10", "AP": "MAP"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Row:
    """One measured configuration: a server stage, or the baseline."""

    key: str
    label: str
    scores: Scores
    params: dict[str, Any]
    latency_ms: Sequence[float] = ()
    errors: int = 0
    ranking: dict[str, list[str]] | None = None
    candidates: float | None = None  # mean usage.candidates: what recall handed on (App. F)
    failures: dict[str, str] = field(default_factory=dict)  # query id → why it failed

    def latency(self, quantile: float) -> float | None:
        if not self.latency_ms:
            return None
        ordered = sorted(self.latency_ms)
        return ordered[min(len(ordered) - 1, math.ceil(quantile * len(ordered)) - 1)]


@dataclass(frozen=True, slots=True)
class Evaluation:
    dataset: str
    documents: int
    queries: int
    server: str
    index_version: str | None
    seed: int
    baseline: Row | None  # None when the dataset has no corpus (a questions file)
    rows: list[Row]
    baseline_name: str = "BM25"
    depth: int = 100  # documents ranked per query
    k: int | None = None  # hits asked per retrieve (clamped to maxK; more when hits are chunks)
    unit: str | None = None  # the retrieve.unit asked, None for the server's default

    def ratio(self, row: Row, measure: str = PRIMARY) -> float:
        if self.baseline is None:
            return math.nan
        base = self.baseline.scores[measure]
        return row.scores[measure] / base if base else math.nan

    def half_ratio(self, row: Row, half: str, measure: str = PRIMARY) -> float:
        """The ratio over one half of the fixed split (``rcpkit.evaluation.split``)."""
        if self.baseline is None:
            return math.nan
        ids = split_queries(self.baseline.scores.per_query, half)
        if not ids:
            return math.nan
        base = fmean(self.baseline.scores.per_query[q][measure] for q in ids)
        mine = fmean(row.scores.per_query.get(q, {}).get(measure, 0.0) for q in ids)
        return mine / base if base else math.nan

    def halves(self) -> list[str]:
        """The halves present among the queries: both when the run covers all (and
        there is a baseline to take each half's ratio to)."""
        if self.baseline is None:
            return []
        present = {split_of(q) for q in self.baseline.scores.per_query}
        return [h for h in ("dev", "heldout") if h in present] if len(present) == 2 else []


def render_table(evaluation: Evaluation, *, markdown: bool = True) -> str:
    """Every row's measures and its nDCG@10 as a ratio to the in-run BM25 baseline."""
    halves = evaluation.halves()
    based = evaluation.baseline is not None
    heads = ["run", *(_LABELS.get(m, m) for m in MEASURES)]
    heads += ["nDCG@10 ÷ BM25"] if based else []
    heads += [f"{_HALF_LABELS[h]} ÷ BM25" for h in halves] + ["p50 ms"]
    lines = []
    for row in _rows(evaluation):
        p50 = row.latency(0.5)
        cells = [row.label + (f" ({row.errors} failed)" if row.errors else "")]
        cells += [f"{row.scores[m]:.4f}" for m in MEASURES]
        ratios = [evaluation.ratio(row)] if based else []
        ratios += [evaluation.half_ratio(row, h) for h in halves]
        cells += ["—" if math.isnan(ratio) else f"{ratio:.3f}×" for ratio in ratios]
        cells += ["—" if p50 is None else f"{p50:.1f}"]
        lines.append(cells)
    corpus = (
        f"{evaluation.documents} documents"
        if based
        else "the server's documents (no baseline: the questions bring no corpus)"
    )
    title = (
        f"{evaluation.dataset}: {corpus}, {evaluation.queries} judged "
        f"queries; {evaluation.server}; indexVersion {evaluation.index_version}, "
        f"seed {evaluation.seed}" + (f"; baseline: {evaluation.baseline_name}" if based else "")
    )
    notes = _failures(evaluation)
    if halves:
        judged = evaluation.baseline.scores.per_query if evaluation.baseline else {}
        counts = {h: len(split_queries(judged, h)) for h in halves}
        notes = [
            "",
            f"query halves (rcpkit.evaluation.split, by SHA-256 of the id): dev "
            f"{counts['dev']}, held-out {counts['heldout']}; methods are chosen on dev only",
            *notes,
        ]
    if markdown:
        table = [f"| {' | '.join(heads)} |", f"|{'---|' * len(heads)}"]
        table += [f"| {' | '.join(cells)} |" for cells in lines]
        return "\n".join([title, "", *table, *notes])
    widths = [max(len(row[i]) for row in [heads, *lines]) for i in range(len(heads))]
    text = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [heads, *lines]
    ]
    return "\n".join([title, "", *text, *notes])


def _rows(evaluation: Evaluation) -> list[Row]:
    """The baseline (when there is one), then every measured run."""
    baseline = [] if evaluation.baseline is None else [evaluation.baseline]
    return [*baseline, *evaluation.rows]


def _failures(evaluation: Evaluation) -> list[str]:
    """Under the table: each failing row's count and its first error."""
    lines = []
    for row in evaluation.rows:
        if row.failures:
            query, why = next(iter(row.failures.items()))
            lines.append(f"{row.label}: {len(row.failures)} failed, first {query}: {why}")
    return ["", *lines] if lines else []


def to_json(evaluation: Evaluation) -> dict[str, Any]:
    """The record ``--json`` writes and ``--compare`` reads (camelCase, like the wire).

    Top level: ``dataset``, ``documents`` (corpus rows, empty ones included),
    ``queries`` (judged), ``server``, ``indexVersion`` (the pinned snapshot, null
    without snapshots), ``seed``, ``depth`` (documents ranked per query), ``k``
    (hits asked per ``retrieve``), ``unit`` (the ``retrieve.unit`` asked),
    ``measures``, ``baselineName``, ``baseline`` (null without a corpus: a questions
    file) and ``runs``. Each run: ``key``
    (what ``--stages`` and ``FILE:RUN`` name),
    ``label``, ``params`` (the wire ``retrieve``/``graph`` fields), ``aggregate``
    (measure → mean over every judged query), ``ratioToBaseline`` (nDCG@10; null
    when the baseline scores 0), ``ratioByHalf`` (the same over the dev and
    held-out halves of ``rcpkit.evaluation.split``, when both are present),
    ``latencyMs`` (``p50``/``p95`` nearest-rank,
    ``median`` interpolated; null for the baseline), ``failedQueries``,
    ``failures`` (query id → the server's error), ``meanCandidates`` (mean
    ``usage.candidates``, null when not reported), ``perQuery`` (query id →
    measure → value) and ``ranking`` (query id → document ids, best first).
    """
    return {
        "dataset": evaluation.dataset,
        "documents": evaluation.documents,
        "queries": evaluation.queries,
        "server": evaluation.server,
        "indexVersion": evaluation.index_version,
        "seed": evaluation.seed,
        "depth": evaluation.depth,
        "k": evaluation.k,
        "unit": evaluation.unit,
        "measures": list(MEASURES),
        "baselineName": evaluation.baseline_name,
        "baseline": None
        if evaluation.baseline is None
        else _row_json(evaluation.baseline, evaluation),
        "runs": [_row_json(row, evaluation) for row in evaluation.rows],
    }


def _row_json(row: Row, evaluation: Evaluation) -> dict[str, Any]:
    return {
        "key": row.key,
        "label": row.label,
        "params": row.params,
        "aggregate": row.scores.aggregate,
        "ratioToBaseline": _finite(evaluation.ratio(row)),  # null when the baseline scores 0
        "ratioByHalf": {h: _finite(evaluation.half_ratio(row, h)) for h in evaluation.halves()},
        "latencyMs": {
            "p50": row.latency(0.5),
            "p95": row.latency(0.95),
            "median": median(row.latency_ms) if row.latency_ms else None,
        },
        "failedQueries": row.errors,
        "failures": row.failures,
        "meanCandidates": row.candidates,
        "perQuery": row.scores.per_query,
        "ranking": row.ranking,
    }


def _times(ratio: float) -> str:
    return "" if math.isnan(ratio) else f" ({ratio:.2f}×)"


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def load_evaluation(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not an rcpkit eval JSON file ({error})") from None
    if not isinstance(record, dict) or "runs" not in record or "baseline" not in record:
        raise ValueError(f"{path}: not an rcpkit eval JSON file (no runs)")
    return record


def _pick(record: dict[str, Any], key: str | None, where: str) -> dict[str, Any]:
    rows = {row["key"]: row for row in [record["baseline"], *record["runs"]] if row is not None}
    chosen = key or "default"
    if chosen not in rows:
        raise ValueError(f"{where} has no run {chosen!r}; it has: {', '.join(rows)}")
    return dict(rows[chosen])


@dataclass(frozen=True, slots=True)
class Change:
    query: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


def compare(
    before: tuple[dict[str, Any], str | None],
    after: tuple[dict[str, Any], str | None],
    measure: str = PRIMARY,
) -> tuple[str, str, list[Change]]:
    """Per-query ``measure`` of two runs (``(record, run key)``), largest change first."""
    first, second = _pick(before[0], before[1], "A"), _pick(after[0], after[1], "B")
    common = [q for q in first["perQuery"] if q in second["perQuery"]]
    if not common:
        raise ValueError("the two runs share no query")
    changes = [
        Change(q, first["perQuery"][q][measure], second["perQuery"][q][measure]) for q in common
    ]
    changes.sort(key=lambda change: (-abs(change.delta), change.query))
    return first["label"], second["label"], changes


def render_comparison(
    labels: tuple[str, str], changes: Sequence[Change], measure: str = PRIMARY, limit: int = 20
) -> str:
    helped = [c for c in changes if c.delta > 1e-9]
    hurt = [c for c in changes if c.delta < -1e-9]
    mean_a = sum(c.before for c in changes) / len(changes)
    mean_b = sum(c.after for c in changes) / len(changes)
    lines = [
        f"A = {labels[0]}, B = {labels[1]}; {measure} over {len(changes)} queries: "
        f"{mean_a:.4f} → {mean_b:.4f} ({mean_b - mean_a:+.4f})",
        f"B helped {len(helped)}, hurt {len(hurt)}, left {len(changes) - len(helped) - len(hurt)}"
        " unchanged",
    ]
    for title, group in (("helped", helped), ("hurt", hurt)):
        if group:
            lines += ["", f"{title} (largest first):"]
            lines += [
                f"  query {c.query:>6}  {c.before:.4f} → {c.after:.4f}  ({c.delta:+.4f})"
                for c in group[:limit]
            ]
    return "\n".join(lines)


def plot(evaluation: Evaluation, path: Path, measure: str = PRIMARY) -> None:
    """A bar chart of ``measure`` per run, the baseline first and marked by a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows(evaluation)
    values = [row.scores[measure] for row in rows]
    figure, axes = plt.subplots(figsize=(9, 0.45 * len(rows) + 1.6))
    grey = ["#999999"] if evaluation.baseline is not None else []
    colours = [*grey, *["#3b75af"] * len(evaluation.rows)]
    bars = axes.barh([row.label for row in rows], values, color=colours)
    if evaluation.baseline is not None:
        base = evaluation.baseline.scores[measure]
        axes.axvline(base, color="#c44e52", linestyle="--", linewidth=1)
    for bar, row in zip(bars, rows, strict=True):
        axes.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f" {row.scores[measure]:.3f}" + _times(evaluation.ratio(row, measure)),
            va="center",
            fontsize=8,
        )
    axes.invert_yaxis()
    dashed = " (dashed: the BM25 baseline)" if evaluation.baseline is not None else ""
    axes.set_xlabel(f"{_LABELS.get(measure, measure)}{dashed}")
    axes.set_xlim(0, max(values) * 1.25 if max(values) > 0 else 1)
    axes.set_title(f"{evaluation.dataset}: {evaluation.queries} queries, {evaluation.server}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
