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
from typing import TYPE_CHECKING, TextIO

from rcpkit.cli.options import add_engine_arguments

if TYPE_CHECKING:
    from rcpkit.engine.store.base import Store

__all__ = ["HELP", "add_arguments", "run"]

HELP = "write every document of an index as JSON Lines"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", type=Path, default=None, help="file (default: stdout)")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_store_from_args

    config, store = open_store_from_args(args)
    try:
        if args.output is None:
            count = _write(store, sys.stdout)
        else:
            refuse_inside(args.output, config.index)
            if args.output.exists() and not args.output.is_file():  # /dev/stdout, a FIFO
                with args.output.open("w", encoding="utf-8") as out:
                    count = _write(store, out)
            else:
                count = _write_replacing(store, args.output)
    finally:
        store.close()
    print(f"exported {count} document{'' if count == 1 else 's'}", file=sys.stderr)
    return 0


def _write_replacing(store: Store, output: Path) -> int:
    """Write beside ``output`` and rename over it only once every line is written:
    an export that fails midway leaves the file (a previous export) as it was."""
    partial = output.with_name(f".{output.name}.partial-{os.getpid()}")
    try:
        with partial.open("w", encoding="utf-8") as out:
            count = _write(store, out)
        partial.replace(output)
    finally:
        partial.unlink(missing_ok=True)
    return count


def _write(store: Store, out: TextIO) -> int:
    from rcpkit.cli.show import export_record

    count = 0
    for doc_id, _, _ in store.live_documents():
        try:
            document = store.document(doc_id)
        except ValueError as error:  # a stored record that does not parse
            raise ValueError(
                f"document {doc_id} cannot be read ({error}): export stopped"
            ) from None
        if document is not None:
            out.write(json.dumps(export_record(document), ensure_ascii=False) + "\n")
            count += 1
    return count


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
