"""Ingestion: files and folders to documents, documents to citable chunks.

`iter_documents(paths)` walks files and folders (sorted, hidden and junk entries
pruned) and dispatches on the extension through a loader registry: plain text,
Markdown/MDX (front matter into ``meta``), reStructuredText, HTML (main text,
boilerplate dropped), PDF (with page spans), .docx, .ipynb, CSV/TSV rows or
tables, JSON records, JSON Lines rows (BEIR ``corpus.jsonl`` by default), and
source code; `IngestOptions` (``[ingest]`` in rcpkit.toml) names the record
fields and the table mode. It yields a `SourceDocument` per document and a
`Skipped` with a reason for everything it could not use.

`rcpkit.engine.ingest.folders.index_folders` is what ``rcpkit index`` runs: the
walk, chunking and embedding, committed every few seconds so an interrupted run keeps
its work (`rcpkit.engine.ingest.commits`), pruning what is gone at the end of a
complete run, with ids relative to the source root the index records
(`rcpkit.engine.ingest.roots`).

`chunk_document(document, count_tokens)` cuts a document into `ChunkSpan`s bounded
by the caller's tokenizer, overlapping, split at headings, pages, paragraphs,
sentences and (for code) top-level definitions. Offsets are exact character offsets
into ``document.text``, ready for ``Hit.citation.start``/``end``/``page`` (§7.7).

`contextual_prefix(title, heading_path)` is the situating line prepended to a chunk
before embedding (contextual retrieval). `whitespace_token_counter` is a fast,
deterministic counter for tests; real callers pass the embedder's ``count_tokens``.

`with_language(document)` tags a code document with its ``lang`` (the grammar of
its extension, unless ``meta.lang`` is given), as the code loader does.
`rcpkit.engine.ingest.images` reads an image that arrives in a request through OCR.
"""

from rcpkit.engine.ingest._chunking import chunk_document
from rcpkit.engine.ingest._code import with_language
from rcpkit.engine.ingest._context import contextual_prefix
from rcpkit.engine.ingest._loaders import SUPPORTED_EXTENSIONS
from rcpkit.engine.ingest._tokens import whitespace_token_counter
from rcpkit.engine.ingest._types import ChunkSpan, PageSpan, Skipped, SourceDocument
from rcpkit.engine.ingest._walk import iter_documents
from rcpkit.engine.ingest_options import IngestOptions

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "ChunkSpan",
    "IngestOptions",
    "PageSpan",
    "Skipped",
    "SourceDocument",
    "chunk_document",
    "contextual_prefix",
    "iter_documents",
    "whitespace_token_counter",
    "with_language",
]
