"""``rcpkit index PATH...``: index files and folders; re-runs only re-embed changed files."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "index files and folders"
_COMMIT_EVERY = 64  # documents per transaction while indexing folders


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument(
        "--no-contextual",
        action="store_true",
        help="do not prepend title and headings to chunks before embedding",
    )
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Index files and folders; re-runs only re-embed files whose content changed."""
    # Imported here, not above: declaring the options must stay cheap (numpy, models).
    from rcpkit.cli.engine import open_from_args
    from rcpkit.engine.ingest import SourceDocument, iter_documents
    from rcpkit.engine.ingest.indexer import index_documents

    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        raise ValueError(f"no such file or folder: {', '.join(missing)}")
    engine = open_from_args(args)
    started = time.perf_counter()
    added = unchanged = chunks = 0
    skipped: list[tuple[str, str]] = []
    pending: list[SourceDocument] = []

    def flush() -> None:
        nonlocal added, unchanged, chunks
        if not pending:
            return
        report = index_documents(
            engine,
            pending,
            contextual=not args.no_contextual,
            skip_unchanged=True,
            origin="ingest",
        )
        added += len(pending) - report.unchanged
        unchanged += report.unchanged
        chunks += report.chunks
        pending.clear()
        seen = added + unchanged
        print(f"\rindexing: {seen} documents, {chunks} new chunks", end="", file=sys.stderr)

    for item in iter_documents(args.paths):
        if isinstance(item, SourceDocument):
            pending.append(item)
            if len(pending) >= _COMMIT_EVERY:
                flush()
        else:
            skipped.append((str(item.path), item.reason))
    flush()
    print(file=sys.stderr)
    documents, total_chunks = engine.store.count()
    seconds = time.perf_counter() - started
    print(f"index {engine.config.index} (version {engine.store.version})")
    print(f"  {'indexed':<10} {added:>7} documents  {chunks:>7} chunks")
    print(f"  {'unchanged':<10} {unchanged:>7} documents")
    print(f"  {'skipped':<10} {len(skipped):>7} files")
    print(f"  {'total':<10} {documents:>7} documents  {total_chunks:>7} chunks   {seconds:.1f} s")
    for path, reason in skipped[:20]:
        print(f"    skipped {path}: {reason}")
    engine.close()
    return 0
