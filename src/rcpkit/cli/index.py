"""``rcpkit index PATH...``: make the index mirror files and folders (committing as it goes)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from rcpkit.cli.options import add_engine_arguments
from rcpkit.cli.words import counted
from rcpkit.progress import Board

if TYPE_CHECKING:
    from rcpkit.engine.ingest.commits import Interrupted
    from rcpkit.engine.ingest.folders import FolderRun

__all__ = ["HELP", "add_arguments", "run"]

HELP = "make an index mirror files and folders"

_EXAMPLES = 3  # files shown per skip reason unless --show-skipped


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument(
        "--vectors",
        type=Path,
        default=None,
        metavar="FILE.jsonl",
        help="add documents with your own vectors, one {id, text, vector, meta} per line "
        "(the index is made with --embedder vectors:[NAME:]DIMENSION)",
    )
    parser.add_argument(
        "--no-contextual",
        action="store_true",
        help="do not prepend title and headings to chunks before embedding",
    )
    parser.add_argument(
        "--no-prune",
        action="store_true",
        help="append only: keep documents whose file is gone from the folders indexed",
    )
    parser.add_argument(
        "--reroot",
        action="store_true",
        help="the corpus moved: make the paths given the source root, prune everything else",
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="read file symlinks that point outside the indexed folder (skipped by default)",
    )
    parser.add_argument(
        "--ocr-workers",
        type=_workers,
        default=None,
        metavar="N",
        help="processes that OCR images and scanned PDF pages (0 = in this process; "
        "default min(cpu, 2))",
    )
    parser.add_argument(
        "--commit-seconds",
        type=_seconds,
        default=None,
        metavar="S",
        help="commit what is embedded every S seconds, so an interrupted run keeps it "
        "(default 10; 0 = after every embedder call)",
    )
    parser.add_argument(
        "--show-skipped", action="store_true", help="list every skipped file, not 3 per reason"
    )
    add_engine_arguments(parser)


def _workers(text: str) -> int:
    count = int(text)
    if count < 0:
        raise argparse.ArgumentTypeError("--ocr-workers must be 0 or more")
    return count


def _seconds(text: str) -> float:
    seconds = float(text)
    if not seconds >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError("--commit-seconds must be 0 or more")
    return seconds


class _Progress:
    """`RunProgress` drawn on a `Board`: bytes done of the total (the ETA), files, chunks.

    The ETA is the bytes' (issue 51): files lag chunks and differ in size. Files
    show their total without an ETA; chunks a count and a rate, since their total
    is known only once every file is parsed (parsing runs ahead of embedding).
    """

    def __init__(self, board: Board) -> None:
        self._board = board
        self._total = 0

    def started(self, files: int, size: int) -> None:
        self._board.say(f"{counted(files, 'file')} to read")
        self._total = size
        self._board.counter("bytes", size, "B")
        self._board.counter("files", files, "file", eta=False)
        self._board.counter("chunks", None, "chunk")

    def parsed(self, chunks: int) -> None:
        """Not drawn: a total that grows under a bar is not a total."""

    def embedded(self, files: int, chunks: int, current: str | None, size: int) -> None:
        self._board.update("bytes", size, current)
        self._board.update("chunks", chunks)
        self._board.update("files", files)

    def unneeded(self, size: int) -> None:
        self._total -= size
        self._board.retotal("bytes", self._total)

    def recognized(self, files: int, total: int) -> None:
        if files == 1:
            self._board.counter("ocr", total, "file", eta=False)
        self._board.update("ocr", files)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_from_args
    from rcpkit.engine.ingest.commits import COMMIT_SECONDS, Interrupted
    from rcpkit.engine.ingest.folders import index_folders

    if args.vectors is not None:
        from rcpkit.cli.index_vectors import add_vector_lines

        return add_vector_lines(args)
    if not args.paths:
        raise ValueError("index what? give files or folders, or --vectors FILE.jsonl")
    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        raise ValueError(f"no such file or folder: {', '.join(missing)}")
    seconds = COMMIT_SECONDS if args.commit_seconds is None else args.commit_seconds
    started = time.perf_counter()
    # Off a terminal (cron, a log) only the first lines and the last: the summary says it.
    with Board("indexing", interval=math.inf) as board:
        board.say(f"opening {args.index or 'the index'} and scanning {len(args.paths)} path(s)")
        engine = open_from_args(args)
        try:
            result = index_folders(
                engine,
                args.paths,
                prune=not args.no_prune,
                contextual=not args.no_contextual,
                options=engine.config.ingest,
                progress=_Progress(board),
                reroot=args.reroot,
                follow_links=args.follow_links,
                ocr_workers=args.ocr_workers,
                commit_seconds=seconds,
            )
            documents, total_chunks = engine.store.count()
        except Interrupted as stop:
            _interrupted(stop)
            return 130  # 128 + SIGINT, as a shell reports Ctrl-C
        except KeyboardInterrupt:  # in the last commit: it rolled back, the earlier ones stay
            print("rcpkit: interrupted; the commits made before are kept", file=sys.stderr)
            return 130
        finally:
            engine.close()
    _summary(result, str(engine.config.store or engine.config.index), documents, total_chunks)
    _skips(result, args.show_skipped)
    print(f"  {'took':<10} {time.perf_counter() - started:.1f} s")
    return 0


def _interrupted(stop: Interrupted) -> None:
    """One line: what the interrupted run kept, and how to finish it."""
    kept = stop.kept
    if kept.version is None:
        print("rcpkit: interrupted before anything was committed", file=sys.stderr)
        return
    print(
        f"rcpkit: interrupted; kept {counted(kept.documents, 'document')} "
        f"({counted(kept.chunks, 'chunk')}) in version {kept.version}: run the same command "
        "again to index the rest",
        file=sys.stderr,
    )


def _summary(run: FolderRun, index: str, documents: int, chunks: int) -> None:
    change = "committed" if run.committed else "nothing changed, no new version"
    print(f"index {index} (version {run.version}: {change})")
    if run.previous_root is not None and run.previous_root != run.root:
        print(f"  source root moved from {run.previous_root} to {run.root}")
    print(f"  {'root':<10} {run.root}  (document ids are paths relative to it)")
    indexed = f"{_documents(run.added + run.updated)}  {counted(run.chunks, 'chunk', 7)}"
    print(f"  {'indexed':<10} {indexed}  ({run.added} new, {run.updated} changed)")
    print(f"  {'unchanged':<10} {_documents(run.unchanged)}")
    print(f"  {'removed':<10} {_documents(run.removed)}")
    print(f"  {'skipped':<10} {counted(len(run.skipped), 'file', 7)}")
    print(f"  {'total':<10} {_documents(documents)}  {counted(chunks, 'chunk', 7)}")
    if run.chunks:
        rate = run.chunks / max(run.seconds, 1e-9)
        seconds = f"({run.seconds:.1f} s from the model loaded)"
        # In the chunks column, as the rows above keep it.
        print(f"  {'embedded':<10} {'':<17}  {rate:7.1f} chunks/s  {seconds}")


def _documents(count: int) -> str:
    return f"{counted(count, 'document', 7):<17}"  # the chunks column stays aligned


def _skips(run: FolderRun, show_all: bool) -> None:
    """Every skip reason with its count; a few files per reason, or all of them."""
    from rcpkit.engine.ingest.folders import reason_kind

    by_kind: dict[str, list[str]] = defaultdict(list)
    for item in run.skipped:
        where = f"{item.path}" + (f":{item.line}" if item.line else "")
        kind = reason_kind(item.reason)
        by_kind[kind].append(where if item.reason == kind else f"{where} ({item.reason})")
    for kind, count in run.skip_reasons():
        print(f"  skipped {count:>5} × {kind}")
        paths = by_kind[kind]
        shown = paths if show_all else paths[:_EXAMPLES]
        for path in shown:
            print(f"      {path}")
        if len(paths) > len(shown):
            print(f"      … and {len(paths) - len(shown)} more (--show-skipped lists them all)")
