"""Retrieval quality over the wire (spec Appendix F): ``rcpkit eval``.

Metric computation is client-side, as Appendix F asks, so any engine that
speaks RCP drops into the same harness:

- ``dataset``  a BEIR-layout collection (corpus, queries, graded qrels);
- ``metrics``  nDCG@10, Recall@50/100, MRR@10 and MAP through ``ir-measures``;
- ``baseline`` plain BM25 (``bm25s``) computed outside rcpkit in the same run;
- ``stages``   the sweep of ``retrieve`` configurations a server's capabilities allow;
- ``harness``  loads the corpus through ``index/add`` and runs every query, pinned;
- ``report``   the table, JSON, a bar chart and the per-query comparison.

From Python, against any connected client::

    server = ["rcpkit", "serve", "--index", "idx", "--create"]  # a new, empty index
    async with await Client.connect_stdio(server) as client:
        evaluation = await evaluate(client, load_dataset(Path("cranfield")))
    print(render_table(evaluation))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.evaluation.dataset import Dataset, load_dataset
    from rcpkit.evaluation.harness import evaluate
    from rcpkit.evaluation.metrics import MEASURES, Scores, score_run
    from rcpkit.evaluation.report import Evaluation, render_table

# Imported on first use (rcpkit._lazy): importing the package stays cheap, and
# the harness pulls in the client.
__getattr__ = lazy_exports(
    __name__,
    {
        "dataset": ("Dataset", "load_dataset"),
        "harness": ("evaluate",),
        "metrics": ("MEASURES", "Scores", "score_run"),
        "report": ("Evaluation", "render_table"),
    },
)

__all__ = [
    "MEASURES",
    "Dataset",
    "Evaluation",
    "Scores",
    "evaluate",
    "load_dataset",
    "render_table",
    "score_run",
]
