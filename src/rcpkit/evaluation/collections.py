"""Test collections of different shapes, generated from material installed on this machine.

    rcpkit collections [OUT] [--only NAME,...] [--cranfield DIR]

Issue 33: defaults are chosen by the *worst* collection, so there must be more
than two, and of different shapes. Nothing is downloaded; every collection is
written in the BEIR layout (``corpus.jsonl``, ``queries.jsonl``,
``qrels/test.tsv``) with a ``README.txt`` saying where it comes from, into
``OUT/<name>/`` (default ``~/.cache/rcpkit/collections``). A collection already
written is kept, so re-runs are cheap. The dev / held-out halves are
``rcpkit.evaluation.split``'s fixed hash of the query id (``Dataset.half``).

==================  =========================================  ==================  ==========
name                documents                                  queries             shape
==================  =========================================  ==================  ==========
cranfield           the shared Cranfield abstracts (copied)    natural language    long prose
cranfield-keywords  the same                                   the same, content   long prose
                                                               words only          keywords
cranfield-mixed     the same, half of them (by id hash) cut to     unchanged           mixed: title-
                    their title                                                    only and full
docstrings          NumPy/SciPy docstring prose (`docstrings`)  summary line        prose
man-short           man pages' NAME line (a name and a few      DESCRIPTION's       title-only
                    words) + Debian package synopses as          first sentence      short docs
                    distractors
man-long            man pages' DESCRIPTION (≤ 300 words)       NAME line's words   long, short
                                                                                   queries
man-verbose         man pages' OPTIONS (≤ 300 words)           DESCRIPTION         long, long
                                                               (≤ 120 words)       queries
stdlib-code         stdlib function sources, docstring cut     docstring's first   code
                                                               sentence
==================  =========================================  ==================  ==========

The known-item collections (all but the Cranfield pair) have one relevant
document per query; the generators drop any query or document text seen twice
(aliases, re-exports) so no query has two right answers, and sample by a hash
of the id (``_sample``), so the output depends only on what is installed.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sysconfig
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COLLECTIONS", "DEFAULT_CACHE", "SHARED_CRANFIELD", "Item", "ensure", "write"]

DEFAULT_CACHE = Path("~/.cache/rcpkit/collections").expanduser()
SHARED_CRANFIELD = Path("/work/shared/datasets/cranfield")


@dataclass(frozen=True, slots=True)
class Item:
    """One known item: a query and the one document that answers it."""

    doc_id: str
    title: str
    text: str
    query: str | None  # None: a distractor, no query points at it


def _key(value: str) -> str:
    return hashlib.sha256(("rcpkit-collections/1:" + value).encode("utf-8")).hexdigest()


def _sample(items: Iterable[Item], limit: int) -> list[Item]:
    """The ``limit`` items with the smallest id hash, in id order: stable, order-free."""
    chosen = sorted(items, key=lambda item: _key(item.doc_id))[:limit]
    return sorted(chosen, key=lambda item: item.doc_id)


def _unique(items: Iterable[Item]) -> list[Item]:
    """Drop an item whose query or text was seen before (its first holder stays)."""
    seen_q: set[str] = set()
    seen_t: set[str] = set()
    kept = []
    for item in items:
        query = (item.query or "").casefold()
        text = item.text.casefold()
        if text in seen_t or (query and query in seen_q):
            continue
        seen_t.add(text)
        if query:
            seen_q.add(query)
        kept.append(item)
    return kept


def _write_items(out: Path, items: list[Item], readme: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    queries = 0
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus, \
         (out / "queries.jsonl").open("w", encoding="utf-8") as asked, \
         (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels:  # fmt: skip
        qrels.write("query-id\tcorpus-id\tscore\n")
        for item in items:
            row = {"_id": item.doc_id, "title": item.title, "text": item.text}
            corpus.write(json.dumps(row, ensure_ascii=False) + "\n")
            if item.query is not None:
                queries += 1
                query_id = f"q-{item.doc_id}"
                asked.write(json.dumps({"_id": query_id, "text": item.query}) + "\n")
                qrels.write(f"{query_id}\t{item.doc_id}\t1\n")
    (out / "README.txt").write_text(readme.strip() + "\n", encoding="utf-8")
    return queries


# --- Cranfield and its keyword variant --------------------------------------------

_STOP = frozenset(
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for "
    "from further had has have having how i if in into is it its itself just may me might "
    "more most must my no nor not now of off on once only or other our out over own same "
    "shall should so some such than that the their them then there these they this those "
    "through to too under until up upon very was we were what when where which while who "
    "whom why will with would you your been any obtained given available known possible "
    "problem problems".split()
)


def keyword_query(text: str) -> str:
    """The content words of a natural-language query, each once, in order."""
    words = re.findall(r"[a-z0-9][a-z0-9\-]*", text.casefold())
    kept = dict.fromkeys(w for w in words if w not in _STOP and len(w) > 1)
    return " ".join(kept)


def _title_only_half(source: Path, out: Path) -> None:
    """Cranfield's corpus with the abstract of every other document (by id hash) cut away.

    The shape of a catalogue of computing abstracts where many records are a title
    alone: title-only documents beside full ones, so the length normalisation and
    the feedback pass meet both in one ranking.
    """
    with (source / "corpus.jsonl").open(encoding="utf-8") as read, \
         (out / "corpus.jsonl").open("w", encoding="utf-8") as written:  # fmt: skip
        for line in filter(str.strip, read):
            row = json.loads(line)
            if row.get("title") and int(_key(str(row["_id"]))[:8], 16) % 2:
                row["text"] = ""
            written.write(json.dumps(row) + "\n")


def _cranfield(out: Path, source: Path, keywords: bool, mixed: bool = False) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    if mixed:
        _title_only_half(source, out)
    else:
        shutil.copyfile(source / "corpus.jsonl", out / "corpus.jsonl")
    shutil.copyfile(source / "qrels" / "test.tsv", out / "qrels" / "test.tsv")
    lines = (source / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    with (out / "queries.jsonl").open("w", encoding="utf-8") as asked:
        for line in filter(str.strip, lines):
            row = json.loads(line)
            if keywords:
                row["text"] = keyword_query(str(row["text"]))
            asked.write(json.dumps(row) + "\n")
    what = (
        "its queries reduced to their content words (stop words and question words "
        "dropped, each word once): the keyword-query variant"
        if keywords
        else "unchanged"
    )
    if mixed:
        what += "; every document whose id hash is odd keeps its title only (text emptied)"
    (out / "README.txt").write_text(
        f"Cranfield (1,400 aeronautics abstracts, 225 graded queries) from {source}, {what}.\n",
        encoding="utf-8",
    )
    return len(lines)


# --- man pages ----------------------------------------------------------------------

_MAN = Path("/usr/share/man")
_FONT = re.compile(r"\\f(?:\[[^\]]*\]|\(..|.)")
_ESCAPES = (("\\-", "-"), ("\\(em", "-"), ("\\(en", "-"), ("\\&", ""), ("\\e", "\\"),
            ("\\(aq", "'"), ("\\(lq", '"'), ("\\(rq", '"'), ("\\ ", " "), ("\\|", ""),
            ("\\^", ""), ("\\/", ""), ("\\,", ""), ("\\%", ""))  # fmt: skip
_TEXT_MACROS = {".B", ".I", ".BR", ".IR", ".RB", ".RI", ".BI", ".IB", ".SM", ".SB"}


def _plain(line: str) -> str:
    line = _FONT.sub("", line)
    for old, new in _ESCAPES:
        line = line.replace(old, new)
    line = re.sub(r"\\\*(?:\[[^\]]*\]|\(..|.)", "", line)  # strings (\*(Tm)
    line = re.sub(r"\\[a-zA-Z(\[][^ ]*", "", line)  # anything else escaped
    return line.replace('"', "").strip() if line.startswith(".") else line.strip()


def _sections(source: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in source.splitlines():
        if raw.startswith(('.\\"', "'\\\"", '.\\\\"')):
            continue
        head = raw.split(None, 1)
        macro = head[0] if head else ""
        if macro in (".SH", ".Sh"):
            name = _plain(head[1] if len(head) > 1 else "").strip('"').upper()
            current = sections.setdefault(name, [])
            continue
        if current is None:
            continue
        if macro in _TEXT_MACROS:
            current.append(_plain(head[1] if len(head) > 1 else ""))
        elif raw.startswith((".", "'")):
            continue  # layout macros (.PP, .TP, .IP, .RS …) carry no words
        else:
            current.append(_plain(raw))
    return sections


_PER_FAMILY = 8  # pages per command family (`git-*`, `gcloud *`): no family dominates


def _man_pages(sections: tuple[str, ...] = ("1", "8")) -> Iterator[tuple[str, str, str, str]]:
    """(name, NAME description, DESCRIPTION, OPTIONS) per English man page, sorted by file.

    At most ``_PER_FAMILY`` pages of one family (the name up to its first ``-``,
    ``_``, ``.`` or space): some machines hold thousands of near-identical pages
    of one tool (``gcloud``'s subcommands), which would make the collection theirs.
    """
    families: dict[str, int] = {}
    names_seen: set[str] = set()  # a name in sections 1 and 8 (`intro`) is one page
    for section in sections:
        folder = _MAN / f"man{section}"
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.gz")):
            family = re.split(r"[-_. ]", path.name, maxsplit=1)[0]
            if families.get(family, 0) >= _PER_FAMILY:
                continue
            try:
                source = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
            except (OSError, EOFError):
                continue
            if source.lstrip().startswith(".so "):
                continue  # an alias of another page
            parts = _sections(source)
            name_line = " ".join(" ".join(parts.get("NAME", [])).split())
            description = " ".join(" ".join(parts.get("DESCRIPTION", [])).split())
            names, dash, summary = name_line.partition(" - ")
            if not dash or not description or len(summary.split()) > 15:
                continue  # no NAME line, or one that swallowed a table of contents
            name = names.split(",")[0].strip()
            if name in names_seen:
                continue
            names_seen.add(name)
            families[family] = families.get(family, 0) + 1
            options = " ".join(" ".join(parts.get("OPTIONS", [])).split())
            yield name, summary.strip(), description, options


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text).strip()


def _debian_synopses(limit: int) -> list[Item]:
    """Debian package one-line synopses (``apt-cache dumpavail``) as short distractors."""
    try:
        dump = subprocess.run(
            ["apt-cache", "dumpavail"], capture_output=True, text=True, check=True, timeout=120
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found: dict[str, str] = {}
    package = ""
    for line in dump.splitlines():
        if line.startswith("Package: "):
            package = line[9:].strip()
        elif line.startswith("Description: ") and package:
            found.setdefault(package, line[13:].strip())
    items = [Item(f"deb-{p}", p, s, None) for p, s in sorted(found.items())]
    return _sample(_unique(items), limit)


def _man_short(out: Path, queries: int = 1200, distractors: int = 2500) -> int:
    items = []
    for name, summary, description, _ in _man_pages():
        query = _masked(name, _first_sentence(description))
        if len(query.split()) < 6 or len(summary.split()) < 2:
            continue
        items.append(Item(f"man-{name}", name, summary, " ".join(query.split()[:40])))
    chosen = _sample(_unique(items), queries)
    noise = _debian_synopses(distractors)
    return _write_items(
        out,
        chosen + noise,
        f"""Title-only, short documents with natural-language queries. From the English
man pages of sections 1 and 8 under {_MAN} (this machine's): a document is a
page's NAME line, the command as its title and its few words of description as
the text; its query is the first sentence of the page's DESCRIPTION section,
the command's name in it replaced by "this command".
{len(noise)} Debian package synopses (`apt-cache dumpavail`: package name as
title, the one-line Description as text) are added as distractors; no query
points at them. {len(chosen)} queries, one relevant document each.""",
    )


def _man_long(out: Path, queries: int = 1000, words: int = 300) -> int:
    items = []
    for name, summary, description, _ in _man_pages():
        if len(summary.split()) < 3 or len(description.split()) < 40:
            continue
        items.append(Item(f"man-{name}", name, " ".join(description.split()[:words]), summary))
    chosen = _sample(_unique(items), queries)
    return _write_items(
        out,
        chosen,
        f"""Long documents with short keyword-like queries. From the English man pages
of sections 1 and 8 under {_MAN}: a document is a page's DESCRIPTION section
(its first {words} words) titled with the command; its query is the NAME line's
description ("list directory contents"). {len(chosen)} queries, one relevant
document each.""",
    )


def _masked(name: str, text: str) -> str:
    """``text`` with the command's own name masked: a user asking in words does not know it."""
    return re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", "this command", text,
                  flags=re.IGNORECASE)  # fmt: skip


def _man_verbose(out: Path, queries: int = 1000, words: int = 300, asked: int = 120) -> int:
    # Issue 50: a long request repeats its subject's words; the other collections'
    # queries are a sentence or a few words, where scoring a term once per query or
    # once per occurrence is the same. The query and the document are different
    # sections of one page, so neither is a copy of the other.
    items = []
    for name, _, description, options in _man_pages():
        if len(description.split()) < 40 or len(options.split()) < 40 or name.lower() in _STOP:
            continue  # a name that is an English word (`as`) cannot be masked
        query = " ".join(_masked(name, description).split()[:asked])
        items.append(Item(f"man-{name}", name, " ".join(options.split()[:words]), query))
    chosen = _sample(_unique(items), queries)
    return _write_items(
        out,
        chosen,
        f"""Long, verbose queries. From the English man pages of sections 1 and 8 under
{_MAN}: a document is a page's OPTIONS section (its first {words} words) titled
with the command; its query is the page's DESCRIPTION (its first {asked} words),
the command's name in it replaced by "this command": a paragraph describing what
is wanted, answered by the page whose options do it. {len(chosen)} queries, one
relevant document each.""",
    )


# --- the standard library's code ----------------------------------------------------

_STDLIB_MODULES = (
    "argparse", "ast", "asyncio", "base64", "calendar", "collections", "configparser",
    "csv", "datetime", "decimal", "difflib", "email", "fractions", "ftplib", "functools",
    "gettext", "glob", "gzip", "heapq", "hmac", "html", "http", "imaplib", "inspect",
    "ipaddress", "json", "logging", "mailbox", "multiprocessing", "netrc", "ntpath",
    "os", "pathlib", "pickle", "pkgutil", "platform", "plistlib", "poplib", "posixpath",
    "pprint", "pydoc", "queue", "random", "re", "shlex", "shutil", "smtplib", "socket",
    "socketserver", "statistics", "string", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "tokenize", "traceback", "turtle", "typing", "unittest",
    "urllib", "uuid", "warnings", "wave", "weakref", "xml", "zipfile", "zoneinfo",
)  # fmt: skip


def _stdlib_functions() -> Iterator[tuple[str, str, str]]:
    """(qualified name, docstring's first sentence, source without the docstring)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    for module in _STDLIB_MODULES:
        base = root / module
        files = sorted(base.rglob("*.py")) if base.is_dir() else [root / f"{module}.py"]
        for path in files:
            if not path.is_file() or "test" in path.parts[-2:]:
                continue
            source = path.read_text(encoding="utf-8", errors="replace")
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            dotted = ".".join(path.relative_to(root).with_suffix("").parts)
            yield from _functions_of(tree, source, dotted.removesuffix(".__init__"))


def _functions_of(tree: ast.Module, source: str, module: str) -> Iterator[tuple[str, str, str]]:
    lines = source.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = ast.get_docstring(node)
        if not doc or node.name.startswith("__") or node.end_lineno is None:
            continue
        first = node.body[0]
        body = lines[node.lineno - 1 : first.lineno - 1] + lines[first.end_lineno or 0 :
                                                                 node.end_lineno]  # fmt: skip
        code = "\n".join(body).strip()
        query = _first_sentence(" ".join(doc.split()))
        if len(query.split()) >= 5 and len(code.split()) >= 8:
            yield f"{module}.{node.name}", query, code


def _stdlib_code(out: Path, queries: int = 1500) -> int:
    items = [
        Item(f"py-{name}", name, code[:4000], query)
        for name, query, code in sorted(_stdlib_functions())
    ]
    chosen = _sample(_unique(items), queries)
    root = sysconfig.get_paths()["stdlib"]
    return _write_items(
        out,
        chosen,
        f"""Natural-language queries over code. From the standard library of this
interpreter ({root}): a document is a function's source with its docstring cut
out, titled with its dotted name; its query is the docstring's first sentence
(at least five words). Modules: {", ".join(_STDLIB_MODULES)}. {len(chosen)}
queries, one relevant document each.""",
    )


def _docstrings(out: Path, packages: tuple[str, ...] | None) -> int:
    from rcpkit.evaluation.docstrings import DEFAULT_PACKAGES, write_collection

    return write_collection(out, packages or DEFAULT_PACKAGES)


Packages = tuple[str, ...] | None  # the docstrings collection's modules (None: numpy, scipy)
COLLECTIONS: dict[str, Callable[[Path, Path, Packages], int]] = {
    "cranfield": lambda out, cranfield, _: _cranfield(out, cranfield, keywords=False),
    "cranfield-keywords": lambda out, cranfield, _: _cranfield(out, cranfield, keywords=True),
    "cranfield-mixed": lambda out, cranfield, _: _cranfield(out, cranfield, False, mixed=True),
    "docstrings": lambda out, _, packages: _docstrings(out, packages),
    "man-short": lambda out, _, __: _man_short(out),
    "man-long": lambda out, _, __: _man_long(out),
    "man-verbose": lambda out, _, __: _man_verbose(out),
    "stdlib-code": lambda out, _, __: _stdlib_code(out),
}


def write(
    name: str, out: Path, cranfield: Path = SHARED_CRANFIELD, packages: Packages = None
) -> int:
    """(Re)generate collection ``name`` into ``out``; returns its number of queries."""
    if name not in COLLECTIONS:
        raise ValueError(f"no collection {name!r}: one of {', '.join(COLLECTIONS)}")
    return COLLECTIONS[name](out, cranfield, packages)


def ensure(name: str, cache: Path = DEFAULT_CACHE, cranfield: Path = SHARED_CRANFIELD) -> Path:
    """The folder of collection ``name`` under ``cache``, generated when missing."""
    folder = cache / name
    if not (folder / "qrels" / "test.tsv").is_file():
        write(name, folder, cranfield)
    return folder
