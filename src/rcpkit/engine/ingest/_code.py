"""Source code at syntax boundaries: tree-sitter definitions become chunk sections.

Each function, class, method (and impl, trait, interface, namespace, module) starts
a section whose heading path is its symbol path, ``("Parser", "parse_filter")``; a
class is opened up so each method is its own section, while a function keeps its
nested helpers. Comments right above a definition stay with it. Where the optional
``tree-sitter-language-pack`` (extra ``code``) or the file's grammar is missing,
`code_sections` returns ``None`` and the chunker falls back to its line-based code
boundaries (`_boundaries`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from rcpkit.engine.ingest._types import SourceDocument

__all__ = [
    "LANGUAGE_OF_EXTENSION",
    "CodeBoundary",
    "code_boundaries",
    "language_of",
    "with_language",
]

LANGUAGE_OF_EXTENSION: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys((".py", ".pyi"), "python"),
        **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"),
        ".ts": "typescript",
        ".tsx": "tsx",
        ".go": "go",
        ".rs": "rust",
        ".java": "java",
        **dict.fromkeys((".kt", ".kts"), "kotlin"),
        ".scala": "scala",
        **dict.fromkeys((".c", ".h"), "c"),
        **dict.fromkeys((".cc", ".cpp", ".cxx", ".hpp", ".hh"), "cpp"),
        ".cs": "csharp",
        ".rb": "ruby",
        ".php": "php",
        ".swift": "swift",
        ".lua": "lua",
        **dict.fromkeys((".sh", ".bash", ".zsh"), "bash"),
        ".sql": "sql",
    }
)

# Definitions that hold more definitions: a section per member.
_CONTAINERS = frozenset(
    """class_definition class_declaration class_specifier struct_specifier interface_declaration
    trait_item impl_item mod_item namespace_definition namespace_declaration object_definition
    object_declaration trait_definition struct_declaration protocol_declaration module class
    enum_declaration""".split()
)
# Definitions kept whole (a function keeps its nested helpers).
_LEAVES = frozenset(
    """function_definition function_declaration function_item method_declaration
    method_definition constructor_declaration generator_function_declaration method
    singleton_method type_declaration struct_item enum_item type_alias_declaration
    abstract_method_signature local_function_declaration""".split()
)
# Wrappers whose inner node names the definition: decorators, `export`, templates.
_WRAPPERS = frozenset("decorated_definition export_statement template_declaration".split())
_BODIES = frozenset(
    """block class_body declaration_list interface_body field_declaration_list enum_body
    body_statement template_body object_type enum_class_body""".split()
)
_MAX_NAME = 120


@dataclass(frozen=True, slots=True)
class CodeBoundary:
    """From ``offset`` (a character offset) on, the text belongs to ``path``."""

    offset: int
    path: tuple[str, ...]


def language_of(document: SourceDocument) -> str | None:
    """The tree-sitter language of a code document: ``meta.lang``, else its extension."""
    lang = document.meta.get("lang")
    if isinstance(lang, str) and lang in LANGUAGE_OF_EXTENSION.values():
        return lang
    ext = document.meta.get("ext")
    return LANGUAGE_OF_EXTENSION.get(ext) if isinstance(ext, str) else None


def code_boundaries(document: SourceDocument) -> list[CodeBoundary] | None:
    """Symbol-path boundaries in text order, or ``None`` when no grammar parses the file."""
    lang = language_of(document)
    parser = _parser(lang) if lang is not None else None
    if parser is None:
        return None
    raw = document.text.encode("utf-8", errors="surrogatepass")
    try:
        tree = parser.parse(raw)
    except Exception:  # a grammar failing on odd input must not lose the file
        return None
    to_char = _char_offsets(document.text, raw)
    marks: dict[int, tuple[str, ...]] = {0: ()}
    for byte_offset, path in _walk(tree.root_node, (), raw):
        marks[to_char(byte_offset)] = path  # a later (outer) mark at one offset wins
    ordered = sorted(marks.items())
    kept = [
        CodeBoundary(offset, path)
        for index, (offset, path) in enumerate(ordered)
        if index == 0 or _has_words(document.text, offset, _next(ordered, index, document.text))
    ]
    return kept if len(kept) > 1 else None


def _next(ordered: list[tuple[int, tuple[str, ...]]], index: int, text: str) -> int:
    return ordered[index + 1][0] if index + 1 < len(ordered) else len(text)


def _has_words(text: str, start: int, end: int) -> bool:
    """A class's closing ``}`` or ``};`` is no section: it stays with the last member."""
    return any(char.isalnum() for char in text[start:end])


def _walk(
    container: Any, path: tuple[str, ...], raw: bytes
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(byte offset, path) marks for the definitions directly inside ``container``."""
    pending: int | None = None  # start of the comments right above the next definition
    for child in container.named_children:
        if "comment" in child.type:
            pending = child.start_byte if pending is None else pending
            continue
        inner = _definition(child)
        if inner is None:
            pending = None
            continue
        name = _name(inner, raw)
        start = _line_start(raw, pending if pending is not None else child.start_byte)
        pending = None
        here = (*path, name)
        yield start, here
        if inner.type in _CONTAINERS:
            body = _body(inner)
            if body is not None:
                yield from _walk(body, here, raw)  # members are sections of their own
        yield child.end_byte, path


def _definition(node: Any) -> Any | None:
    if node.type in _WRAPPERS:
        inner = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
        if inner is None:
            inner = next((c for c in node.named_children if _is_definition(c)), None)
        return inner if inner is not None and _is_definition(inner) else None
    return node if _is_definition(node) else None


def _is_definition(node: Any) -> bool:
    return node.type in _CONTAINERS or node.type in _LEAVES


def _body(node: Any) -> Any | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    return next((c for c in node.named_children if c.type in _BODIES), None)


def _name(node: Any, raw: bytes) -> str:
    """The definition's name: its ``name`` field, else the innermost declarator (C/C++)."""
    named = node.child_by_field_name("name")
    if named is None and node.type == "impl_item":  # Rust's `impl Foo` is named by its type
        named = node.child_by_field_name("type")
    if named is not None:
        return _text(named, raw)
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        deeper = declarator.child_by_field_name("declarator")
        if deeper is None:
            return _text(declarator, raw)
        declarator = deeper
    spec = next((c for c in node.named_children if c.type == "type_spec"), None)  # Go
    if spec is not None and spec.child_by_field_name("name") is not None:
        return _text(spec.child_by_field_name("name"), raw)
    return str(node.type).replace("_", " ")


def _text(node: Any, raw: bytes) -> str:
    text = raw[node.start_byte : node.end_byte].decode("utf-8", errors="replace")
    return " ".join(text.split())[:_MAX_NAME]


def _line_start(raw: bytes, offset: int) -> int:
    """The start of the line when only indentation precedes ``offset`` on it."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return line_start if not raw[line_start:offset].strip() else offset


def _char_offsets(text: str, raw: bytes) -> Callable[[int], int]:
    if len(raw) == len(text):
        return lambda offset: offset
    starts = [0] * (len(raw) + 1)  # byte offset -> character offset
    position = 0
    for index, char in enumerate(text):
        width = len(char.encode("utf-8", errors="surrogatepass"))
        for step in range(width):
            starts[position + step] = index
        position += width
    starts[position] = len(text)
    return lambda offset: starts[offset]


_local = threading.local()  # tree-sitter parsers are not shared between threads


def _parser(lang: str) -> Any | None:
    cache: dict[str, Any] = _local.__dict__.setdefault("parsers", {})
    if lang not in cache:
        cache[lang] = _load_parser(lang)
    return cache[lang]


def _load_parser(lang: str) -> Any | None:
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError:
        return None
    try:
        return get_parser(lang)  # type: ignore[arg-type]
    except Exception:  # an unknown or unloadable grammar: fall back to the line splitter
        return None


def with_language(document: SourceDocument) -> SourceDocument:
    """A code document with ``meta.lang`` (the grammar's name) set when it is known."""
    if "lang" in document.meta:
        return document
    ext = document.meta.get("ext")
    if not isinstance(ext, str):
        suffix = document.uri.rsplit("/", 1)[-1]
        ext = suffix[suffix.rfind(".") :].lower() if "." in suffix else ""
    lang = LANGUAGE_OF_EXTENSION.get(ext)
    return replace(document, meta={**document.meta, "lang": lang}) if lang else document
