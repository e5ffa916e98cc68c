"""``rcpkit show ID``: the text a document's citation offsets index, or a slice of it.

For HTML, PDF, .docx, notebooks and per-record documents (``meta.textOf =
"extracted"``) ``citation.start``/``end`` are offsets into the extracted text, not
the raw file: ``rcpkit show ID --start S --end E`` prints exactly the cited span.
"""

from __future__ import annotations

import argparse
import json

from rcpkit.cli.options import add_engine_arguments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "print the stored text of a document (what citation offsets index)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id",
        help="a document id (a hit's chunk.docId), or a chunk id `rcpkit query` prints "
        "(DOC#N: the document with that chunk marked)",
    )
    parser.add_argument("--start", type=int, default=None, help="citation.start")
    parser.add_argument("--end", type=int, default=None, help="citation.end")
    parser.add_argument("--json", action="store_true", help="the whole stored document as JSON")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from rcpkit.cli.engine import open_store_from_args

    _, store = open_store_from_args(args)
    span: tuple[int, int] | None = None  # the chunk a DOC#N id names
    try:
        document = store.document(args.id)
        doc_id, _, ordinal = args.id.rpartition("#")
        if document is None and doc_id and ordinal.isdigit():
            document = store.document(doc_id)
            chunks = store.document_chunks(doc_id) if document is not None else []
            found = [chunk for chunk in chunks if chunk.index == int(ordinal)]
            if document is not None and not found:
                last = len(chunks) - 1
                raise ValueError(f"document {doc_id!r} has no chunk {ordinal} (0..{last})")
            span = (found[0].start, found[0].end) if found else None
    finally:
        store.close()
    if document is None:
        raise ValueError(f"no document {args.id!r} in this index")
    if args.json:
        record = export_record(document)
        if span is not None:
            record["chunk"] = {"id": args.id, "start": span[0], "end": span[1]}
        print(json.dumps(record, ensure_ascii=False))
        return 0
    text = document.text
    if span is not None and args.start is None and args.end is None:
        start, end = span
        print(
            f"{text[:start]}\n>>> chunk {args.id} [{start}:{end}]\n{text[start:end]}"
            f"\n<<< end of chunk {args.id}\n{text[end:]}"
        )
        return 0
    start = 0 if args.start is None else args.start
    end = len(text) if args.end is None else args.end
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"--start/--end must satisfy 0 <= start <= end <= {len(text)}")
    print(text[start:end])
    return 0


def export_record(document: object) -> dict[str, object]:
    """One stored document as `rcpkit export` writes it (and `rcpkit index` reads it)."""
    from rcpkit.engine.store.base import DocumentRow

    assert isinstance(document, DocumentRow)
    return {
        "_id": document.doc_id,
        "title": document.title,
        "text": document.text,
        "uri": document.uri,
        "source": document.source,
        "modality": document.modality,
        "meta": document.meta,
        "pages": document.pages,
        "origin": document.origin,
    }
