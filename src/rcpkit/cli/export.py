"""``rcpkit export [--output FILE]``: every live document as JSON Lines (BEIR-shaped).

Each line is ``{"_id", "title", "text", "uri", "meta", ...}``: ``text`` is the
stored text citation offsets index, and ``rcpkit index FILE.jsonl`` reads it back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write every document of an index as JSON Lines"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, default=None, help="file (default: stdout)")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_store_from_args
    from rcpkit.cli.show import export_record

    config, store = open_store_from_args(args)
    try:
        if args.output is not None:
            refuse_inside(args.output, config.index)
        out = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
    except BaseException:
        store.close()
        raise
    count = 0
    try:
        for doc_id, _, _ in store.live_documents():
            document = store.document(doc_id)
            if document is not None:
                out.write(json.dumps(export_record(document), ensure_ascii=False) + "\n")
                count += 1
    finally:
        store.close()
        if args.output:
            out.close()
    print(f"exported {count} document{'' if count == 1 else 's'}", file=sys.stderr)
    return 0


def refuse_inside(output: Path, index: Path) -> None:
    """Refuse an output file in the index folder, or one that is an index file by
    another name (a symlink, a hard link): opening it for writing would truncate
    the index it is about to read (``--output INDEX/index.sqlite3``)."""
    folder = index.resolve()
    target = output.resolve()
    if target == folder or folder in target.parents:
        raise ValueError(f"{output} is inside the index folder {index}: write it elsewhere")
    if target.exists() and folder.is_dir():
        for file in folder.iterdir():
            if file.is_file() and os.path.samefile(file, target):
                raise ValueError(f"{output} is the index file {file.name}: write it elsewhere")
