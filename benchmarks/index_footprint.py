"""What each byte per chunk of a SQLite index is for (issue 51's footprint question).

    python benchmarks/index_footprint.py INDEX

INDEX is an index folder (`rcpkit index DOCS --index INDEX` builds one). Printed,
per live chunk: each table's and index's pages in ``index.sqlite3`` (SQLite's
``dbstat``: payload, page overhead and unused space), the payload of the
``chunks`` rows split into its columns, and ``index.mirror`` (the read side's
head start: postings, row arrays, filter columns; since its format 3 not the
vectors, which a load reads from SQLite) split into its sections.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import struct
from pathlib import Path

import numpy as np

_CHUNK_COLUMNS = ("vector", "text", "context", "filter_meta", "doc_id")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("index", type=Path)
    args = parser.parse_args()
    database = args.index / "index.sqlite3"
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as db:
        (chunks,) = db.execute("SELECT count(*) FROM chunks WHERE removed IS NULL").fetchone()
        tables = db.execute(
            "SELECT name, sum(pgsize), sum(payload), sum(unused) FROM dbstat "
            "GROUP BY name ORDER BY sum(pgsize) DESC"
        ).fetchall()
        columns = db.execute(
            "SELECT "
            + ", ".join(f"sum(coalesce(length({column}), 0))" for column in _CHUNK_COLUMNS)
            + " FROM chunks WHERE removed IS NULL"
        ).fetchone()
    mirror = args.index / "index.mirror"
    mirror_bytes = mirror.stat().st_size if mirror.exists() else 0
    total = database.stat().st_size + mirror_bytes
    print(f"{args.index}: {chunks} live chunks, {total / max(chunks, 1):,.0f} B per chunk on disk")
    print(f"  {'page owner':<28} {'B/chunk':>9} {'payload':>9} {'unused':>9}")
    for name, size, payload, unused in tables:
        if size / max(chunks, 1) >= 8:  # the empty tables' one page each are left out
            shares = (size / chunks, payload / chunks, unused / chunks)
            print(f"  {name:<28} " + " ".join(f"{share:9,.0f}" for share in shares))
    print(f"  {'index.mirror':<28} {mirror_bytes / max(chunks, 1):9,.0f}")
    for name, size in _mirror_sections(mirror) if mirror_bytes else []:
        print(f"    {name:<26} {size / max(chunks, 1):9,.0f}")
    print("  chunks payload by column (B/chunk):")
    for column, size in zip(_CHUNK_COLUMNS, columns, strict=True):
        print(f"    {column:<26} {size / max(chunks, 1):9,.0f}")


def _mirror_sections(mirror: Path) -> list[tuple[str, int]]:
    """(section, bytes) of the mirror cache, largest first; its JSON header (the terms,
    tenants, filter values, stamp) and alignment as one more line."""
    data = mirror.read_bytes()
    trailer = struct.Struct("<8sQQI4x")
    _magic, at, length, _crc = trailer.unpack_from(data, len(data) - trailer.size)
    header = json.loads(data[at : at + length])
    sections = [
        (name, int(np.prod(shape)) * np.dtype(dtype).itemsize)
        for name, (_offset, dtype, shape, _crc) in header["sections"].items()
    ]
    sections.append(("header and padding", len(data) - sum(size for _, size in sections)))
    return sorted(sections, key=lambda section: -section[1])


if __name__ == "__main__":
    main()
