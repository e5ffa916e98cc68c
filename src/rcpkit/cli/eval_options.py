"""The options of ``rcpkit eval``, declared without importing the harness.

Every ``rcpkit`` command builds the whole parser at start-up, so this module
imports nothing the eval run itself needs (the client, ir-measures, bm25s).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rcpkit.evaluation.metrics import MEASURES, PRIMARY
from rcpkit.evaluation.split import SPLITS

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset",
        type=Path,
        nargs="?",
        help="folder with corpus.jsonl, queries.jsonl, qrels/ (BEIR); or a questions file, one "
        'JSON line each: {"question": "...", "expected": ["doc-id", ...]}, asked of an '
        "index already built (--index, --http or a command)",
    )
    parser.add_argument("--http", default=None, metavar="URL", help="evaluate an HTTP server")
    parser.add_argument("--token-env", default=None, metavar="NAME", help="bearer token variable")
    parser.add_argument(
        "--load",
        choices=["auto", "always", "never"],
        default="auto",
        help="load the corpus through index/add: auto = when the server is writable and "
        "--index does not name an existing index",
    )
    parser.add_argument(
        "--layout",
        choices=["titled", "meta-title"],
        default="titled",
        help="how --load adds a document: titled = the title in `title`; meta-title = the "
        "title as the first line of `text` and in `meta.title`, no `title`",
    )
    parser.add_argument(
        "--stages", default=None, help="comma-separated stage keys (default: all the server has)"
    )
    parser.add_argument("--queries", type=int, default=None, metavar="N", help="first N queries")
    parser.add_argument(
        "--split",
        default="all",
        choices=SPLITS,
        help="which queries: the fixed development half, the held-out half, or all "
        "(rcpkit.evaluation.split; default: all, with per-half columns)",
    )
    parser.add_argument(
        "--qrels", default="test", metavar="NAME", help="the qrels file, qrels/NAME.tsv (test)"
    )
    parser.add_argument("--depth", type=int, default=100, help="documents ranked per query")
    parser.add_argument("--seed", type=int, default=0, help="retrieve.seed (§7.7.1)")
    parser.add_argument("--concurrency", type=int, default=4, help="queries in flight")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="write results")
    parser.add_argument("--plot", type=Path, default=None, metavar="FILE.png", help="bar chart")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=None,
        metavar="X",
        help="exit 1 unless the default run's nDCG@10 is at least X times the BM25 baseline's",
    )
    parser.add_argument(
        "--compare",
        nargs=2,
        default=None,
        metavar=("A", "B"),
        help="two eval JSON files, each FILE or FILE:RUN (default run: 'default')",
    )
    parser.add_argument("--measure", default=PRIMARY, choices=MEASURES, help="for --compare")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    federated = parser.add_argument_group("federated benchmark (rcpkit.evaluation.federated)")
    federated.add_argument(
        "--federated",
        action="store_true",
        help="two shards + an unrelated engine (+ --foreign) behind rcpkit gateway, "
        "against one engine holding the whole collection",
    )
    federated.add_argument(
        "--foreign", default=None, metavar="CMD", help="another RCP server's stdio command"
    )
    federated.add_argument(
        "--unrelated",
        type=Path,
        default=None,
        metavar="DIR",
        help="the unrelated collection (default: the generated docstrings collection)",
    )
    federated.add_argument(
        "--work",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the engines' indexes live (kept and reused; default: a temporary folder)",
    )
    federated.add_argument(
        "--fusions", default="rrf,calibrated", metavar="A,B", help="gateway fusion methods"
    )
