"""Retrieval quality over the wire (spec Appendix F): ``rcpkit eval``.

Metric computation is client-side, as Appendix F asks, so any engine that
speaks RCP drops into the same harness:

- ``dataset``  a BEIR-layout collection (corpus, queries, graded qrels);
- ``metrics``  nDCG@10, Recall@50/100, MRR@10 and MAP through ``ir-measures``;
- ``baseline`` plain BM25 (``bm25s``) computed outside rcpkit in the same run;
- ``stages``   the sweep of ``retrieve`` configurations a server's capabilities allow;
- ``harness``  loads the corpus through ``index/add`` and runs every query, pinned;
- ``report``   the table, JSON, a bar chart and the per-query comparison.
"""

from rcpkit.evaluation.dataset import Dataset, load_dataset
from rcpkit.evaluation.metrics import MEASURES, Scores, score_run

__all__ = ["MEASURES", "Dataset", "Scores", "load_dataset", "score_run"]
