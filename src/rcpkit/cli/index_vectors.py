"""``rcpkit index --vectors FILE.jsonl``: documents with your own vectors, one commit.

Each line is ``{"id", "text", "vector", "meta"?, "title"?}``; the index is one
made for your own vectors (``--embedder vectors:[NAME:]DIMENSION``), through
the in-process API (``rcpkit.open``), so the checks are ``Index.add``'s.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from rcpkit.engine.config import default_index_path
from rcpkit.library import LibraryError
from rcpkit.library import open as open_index

__all__ = ["add_vector_lines"]

_POSITION = re.compile(r"^(?:vectors|documents)\[(\d+)\]")


def add_vector_lines(args: argparse.Namespace) -> int:
    documents, vectors, lines = _read(args.vectors)
    where: str | Path = args.store or args.index or default_index_path()
    options: dict[str, Any] = {"cache": args.index} if args.store else {}
    embedder = args.embedder
    if embedder is None and not args.store and not (Path(where) / "index.sqlite3").exists():
        embedder = f"vectors:{len(vectors[0])}"  # a new index: the file's dimension
    with open_index(where, create=True, embedder=embedder, config=args.config, **options) as index:
        try:
            added = index.add(documents, vectors=vectors)
        except LibraryError as error:
            raise ValueError(f"{args.vectors}:{_line(error, lines)}: {error}") from None
    print(
        f"index {where} (version {added.version}): {len(added.ids)} documents "
        f"with their own vectors ({index.embedder})"
    )
    return 0


def _read(path: Path) -> tuple[list[dict[str, Any]], list[Any], list[int]]:
    """The documents, their vectors and the line each came from."""
    documents: list[dict[str, Any]] = []
    vectors: list[Any] = []
    lines: list[int] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(record, dict) or "vector" not in record:
                raise ValueError(f"{path}:{number}: expected an object with a `vector`")
            vectors.append(record.pop("vector"))
            documents.append(record)
            lines.append(number)
    if not documents:
        raise ValueError(f"{path}: no documents")
    return documents, vectors, lines


def _line(error: LibraryError, lines: list[int]) -> int | str:
    """The file's line a refused document or vector came from (the field names it)."""
    found = _POSITION.match(error.field or "")
    return lines[int(found.group(1))] if found and int(found.group(1)) < len(lines) else "?"
