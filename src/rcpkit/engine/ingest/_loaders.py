"""The loader registry: file extension → the function that turns that file into documents."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from rcpkit.engine.ingest._beir import load_beir
from rcpkit.engine.ingest._code import with_language
from rcpkit.engine.ingest._decoding import decode_text
from rcpkit.engine.ingest._formats import (
    EXTRACTED,
    load_csv,
    load_docx,
    load_ipynb,
    load_json,
    load_rst,
)
from rcpkit.engine.ingest._frontmatter import split_front_matter
from rcpkit.engine.ingest._html import extract_html
from rcpkit.engine.ingest._markdown import blank_site_directives, markdown_title
from rcpkit.engine.ingest._ocr import IMAGE_EXTENSIONS, load_image
from rcpkit.engine.ingest._pdf import load_pdf
from rcpkit.engine.ingest._source import (
    FileSource,
    Loader,
    SkipFile,
    build_document,
    read_source_bytes,
)
from rcpkit.engine.ingest._types import SourceDocument

__all__ = ["CODE_EXTENSIONS", "LOADERS", "SUPPORTED_EXTENSIONS"]

CODE_EXTENSIONS = (
    ".py .pyi .js .mjs .cjs .jsx .ts .tsx .go .rs .java .kt .kts .scala .c .h .cc .cpp"
    " .cxx .hpp .hh .cs .rb .php .swift .lua .pl .sh .bash .zsh .sql"
).split()


def load_plain_text(source: FileSource) -> Iterable[SourceDocument]:
    raw = read_source_bytes(source)
    text = decode_text(raw, allow_latin1=True)
    return [build_document(source, raw, text=text, title=None)]


def load_markdown(source: FileSource) -> Iterable[SourceDocument]:
    """Markdown and MDX: front matter read into meta and blanked, so offsets stay raw.

    Include directives are blanked the same way: they name a file, they say nothing.
    """
    raw = read_source_bytes(source)
    front, text = split_front_matter(decode_text(raw, allow_latin1=False))
    text = blank_site_directives(text)
    return [build_document(source, raw, text=text, title=markdown_title(text), front=front)]


def load_code(source: FileSource) -> Iterable[SourceDocument]:
    raw = read_source_bytes(source)
    text = decode_text(raw, allow_latin1=False)
    return [with_language(build_document(source, raw, text=text, title=None, modality="code"))]


def load_html(source: FileSource) -> Iterable[SourceDocument]:
    raw = read_source_bytes(source)
    text, title = extract_html(decode_text(raw, allow_latin1=True))
    if not text.strip():
        raise SkipFile("no text left after removing HTML boilerplate")
    # Headings are rendered as Markdown lines, so an <h1> can title a page without <title>.
    document = build_document(
        source, raw, text=text, title=title or markdown_title(text), extra=EXTRACTED
    )
    return [document]


LOADERS: Mapping[str, Loader] = MappingProxyType(
    {
        ".txt": load_plain_text,
        ".text": load_plain_text,
        # Configuration and style sheets, indexed as plain text (issue 36).
        ".yml": load_plain_text,
        ".yaml": load_plain_text,
        ".toml": load_plain_text,
        ".css": load_plain_text,
        ".md": load_markdown,
        ".markdown": load_markdown,
        ".mdx": load_markdown,
        ".rst": load_rst,
        ".docx": load_docx,
        ".csv": load_csv,
        ".tsv": load_csv,
        ".json": load_json,
        ".ipynb": load_ipynb,
        ".html": load_html,
        ".htm": load_html,
        ".pdf": load_pdf,
        ".jsonl": load_beir,
        **dict.fromkeys(CODE_EXTENSIONS, load_code),
        **dict.fromkeys(IMAGE_EXTENSIONS, load_image),  # OCR, when the `ocr` extra is there
    }
)
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(LOADERS)
