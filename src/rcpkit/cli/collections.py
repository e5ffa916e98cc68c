"""``rcpkit collections [OUT]``: write the public test collections of docs/quality.md.

Seven collections of different shapes (long prose, keyword queries, title-only
records beside full abstracts, known-item docstrings, title-only man pages, long
man pages, code), generated from what is
installed on this machine in the BEIR layout ``rcpkit eval`` reads
(``rcpkit.evaluation.collections``). Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write the seven evaluation collections (BEIR layout) from installed material"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "out",
        type=Path,
        nargs="?",
        default=None,
        help="folder of the collections, one subfolder each (default ~/.cache/rcpkit/collections)",
    )
    parser.add_argument("--only", default=None, help="comma-separated collection names")
    parser.add_argument(
        "--cranfield", type=Path, default=None, help="the Cranfield collection to copy"
    )
    parser.add_argument("--force", action="store_true", help="regenerate what exists")
    parser.add_argument(
        "--packages",
        default=None,
        help="comma-separated modules whose docstrings make `docstrings` (default numpy,scipy)",
    )


def run(args: argparse.Namespace) -> int:
    from rcpkit.evaluation import collections

    out = args.out or collections.DEFAULT_CACHE
    names = args.only.split(",") if args.only else list(collections.COLLECTIONS)
    unknown = [name for name in names if name not in collections.COLLECTIONS]
    if unknown:
        known = ", ".join(collections.COLLECTIONS)
        print(
            f"rcpkit collections: no collection {', '.join(unknown)} (one of {known})",
            file=sys.stderr,
        )
        return 2
    packages = tuple(args.packages.split(",")) if args.packages else None
    for name in names:
        folder = out / name
        if args.force or not (folder / "qrels" / "test.tsv").is_file():
            count = collections.write(
                name, folder, args.cranfield or collections.SHARED_CRANFIELD, packages
            )
            print(f"{name}: wrote {count} queries to {folder}")
        else:
            print(f"{name}: kept {folder}")
    return 0
