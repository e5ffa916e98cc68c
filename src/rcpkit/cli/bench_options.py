"""The options of ``rcpkit bench``, declared without importing a suite."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["CAMPAIGNS", "SUITES", "add_arguments"]

SUITES = ("protocol", "engine", "http")
# The hardening campaigns (issue 13): run by name only, never as part of `all`.
CAMPAIGNS = (
    "fuzz", "load", "auth", "crash", "gateway", "mcp", "cache", "race", "tenants",
    "solr-faults", "solr",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "suite",
        nargs="?",
        choices=["all", *SUITES, *CAMPAIGNS],
        default="all",
        help="which suite to run (default: all three, one table); "
        "the campaigns `fuzz` (R1), `crash` (R2), `load` (R3), `auth` (R4), `gateway` "
        "(lying engines), `mcp` (the MCP bridge), `cache` (damaged cache files), `race` "
        "(writers racing on one index), `tenants` (what one tenant's writes tell another) and "
        "`solr-faults` (a SolrCloud node killed under reads and writes) and `solr` (rcpkit over "
        "a 3-node SolrCloud against the embedded engine) run only by name",
    )
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument(
        "--quick", action="store_true", help="fewer iterations: a few minutes for all suites"
    )
    scale.add_argument(
        "--smoke",
        action="store_true",
        help="tiny iterations that only check the command works (the figures mean nothing)",
    )
    parser.add_argument(
        "--store",
        default=None,
        metavar="postgres|URL",
        help="engine suite: also measure a PostgreSQL store against the embedded one; "
        "tenants campaign: run on PostgreSQL "
        "('postgres' starts a private server for trials only, fsync off;"
        " or a postgres:// URL)",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        metavar="100k,1m",
        help="engine suite: instead of its usual rows, compare the engine's index calls with "
        "tantivy, bm25s, faiss and usearch at these corpus sizes (needs the 'bench' extra); "
        "solr: the corpus sizes to measure at (default 20k,100k)",
    )
    parser.add_argument(
        "--hnsw-up-to",
        type=_size,
        default=None,
        metavar="300k",
        help="engine --sizes: build HNSW graphs (rcpkit's own and the peers' curve) only at "
        "sizes up to this; larger sizes serve and compare exact search (graphs take hours there)",
    )
    parser.add_argument(
        "--rounds",
        type=_positive,
        default=None,
        metavar="N",
        help="solr-faults: how many rounds (a node killed, failed over, rejoined; default: "
        "5, --quick 2, --smoke 1)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="solr-faults: the seed that picks each round's node and moment (default: drawn, "
        "and printed)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "--update-readme",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="rewrite the block between <!-- bench:begin --> and <!-- bench:end --> "
        "in FILE with the Markdown table (repeatable)",
    )


def _positive(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return number


def _size(text: str) -> int:
    """``300k`` -> 300000 (one size)."""
    sizes = _sizes(text)
    if len(sizes) != 1:
        raise argparse.ArgumentTypeError(f"one corpus size, not {text!r}")
    return sizes[0]


def _sizes(text: str) -> list[int]:
    """``100k,1m`` -> [100000, 1000000]."""
    sizes = []
    for word in text.lower().replace(" ", "").split(","):
        scale = {"k": 1_000, "m": 1_000_000}.get(word[-1:], 1)
        number = word[:-1] if scale > 1 else word
        try:
            size = int(float(number) * scale)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a corpus size: {word!r}") from None
        if size < 100:
            raise argparse.ArgumentTypeError(f"a corpus size is at least 100, not {word!r}")
        sizes.append(size)
    return sizes
