"""``rcpkit delete ID... | --path GLOB``: remove documents in one commit (one new version)."""

from __future__ import annotations

import argparse
import fnmatch
import sys

from rcpkit.cli.options import add_engine_arguments
from rcpkit.cli.words import counted

__all__ = ["HELP", "add_arguments", "run"]

HELP = "delete documents by id or by a glob over ids"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="*", help="document ids (as `rcpkit query` shows them)")
    parser.add_argument(
        "--path",
        action="append",
        metavar="GLOB",
        help="delete every document whose id matches, e.g. 'drafts/*' (repeat for more)",
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would go, delete none")
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print the summary only, not a line per document"
    )
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_from_args
    from rcpkit.engine.ingest.indexer import delete_documents

    if not args.ids and not args.path:
        raise ValueError("name document ids or --path GLOB")
    engine = open_from_args(args, create=False)
    try:
        live = [doc_id for doc_id, _, _ in engine.store.live_documents()]
        known = set(live)
        chosen = [doc_id for doc_id in args.ids if doc_id in known]
        for pattern in args.path or []:
            chosen += [doc_id for doc_id in live if fnmatch.fnmatchcase(doc_id, pattern)]
        chosen = list(dict.fromkeys(chosen))
        for doc_id in args.ids:
            if doc_id not in known:
                print(f"rcpkit: no document {doc_id!r} (nothing to delete)", file=sys.stderr)
        for doc_id in [] if args.quiet else chosen:
            print(f"{'would delete' if args.dry_run else 'deleted'} {doc_id}")
        if chosen and not args.dry_run:
            result = delete_documents(engine, chosen)
            deleted = counted(result.deleted_documents, "document")
            print(f"{deleted} deleted (version {result.version})")
        elif chosen and args.quiet:
            print(f"would delete {counted(len(chosen), 'document')}")
        elif not chosen:
            print("nothing matched: no version created")
    finally:
        engine.close()
    return 0 if chosen or not args.ids else 1
