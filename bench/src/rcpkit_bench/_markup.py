"""Prose out of the markup installed text is written in: roff, Markdown, reStructuredText.

Each reader yields 60-word windows of paragraphs of 20 words or more (from the
paragraph's first word, or ``shift`` words in: the windows between those). Regular
expressions, not parsers: 21,000 manual pages must be read in a minute or so,
and what a regular expression gets wrong (a table cell, an option list) is
left out by ``is_prose``, which keeps a window only when most of its words are
words of prose.
"""

from __future__ import annotations

import gzip
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "VERSION",
    "WINDOW",
    "is_prose",
    "manual_page",
    "markdown",
    "python_strings",
    "restructured_text",
    "roff",
    "source_comments",
    "text_file",
    "windows",
    "zipped_comments",
]

# Change it when what a reader yields changes: it keys the passages kept on disk.
VERSION = "markup-1"
WINDOW = 60  # words a passage
SHORTEST = 20  # words a paragraph needs to count
_PROSE_SHARE = 2 / 3

_STRINGS = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.DOTALL)
_WORD = re.compile(r"^[(\"'«„“‘]*[^\W\d_]+(?:[-'’][^\W\d_]+)*[)\"'»“”’.,;:!?]*$")
_BOILERPLATE = re.compile(r"copyright|licen[cs]e|warrant|permission is hereby", re.IGNORECASE)


def windows(text: str, shift: int = 0) -> Iterator[str]:
    """The 60-word windows of one paragraph from word ``shift``; one under 20 words is dropped."""
    words = text.split()
    for start in range(shift, len(words), WINDOW):
        window = words[start : start + WINDOW]
        if len(window) >= SHORTEST:
            yield " ".join(window)


def is_prose(window: str) -> bool:
    """Most words are words (letters, maybe hyphenated or punctuated), not code or flags."""
    words = window.split()
    return sum(1 for word in words if _WORD.match(word)) >= _PROSE_SHARE * len(words)


def prose_windows(paragraphs: Iterable[str], shift: int = 0) -> Iterator[str]:
    """The prose windows of the paragraphs, licence and copyright text left out."""
    for paragraph in paragraphs:
        if _BOILERPLATE.search(paragraph):
            continue  # the same few licences, reworded file by file: not the text wanted
        yield from (window for window in windows(paragraph, shift) if is_prose(window))


def python_strings(path: Path, shift: int = 0) -> Iterator[str]:
    """Windows of the triple-quoted strings' paragraphs, unfiltered (as first measured)."""
    for found in _STRINGS.finditer(path.read_text(encoding="utf-8")):
        for paragraph in (found.group(1) or found.group(2) or "").split("\n\n"):
            yield from windows(paragraph, shift)


def _read(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return raw.decode("utf-8")


def manual_page(path: Path, shift: int = 0) -> Iterator[str]:
    """The prose windows of one (gzip'd) roff manual page."""
    yield from prose_windows(roff(_read(path)), shift)


def text_file(path: Path, shift: int = 0) -> Iterator[str]:
    """The prose windows of a Markdown, reStructuredText, plain text or METADATA file."""
    text = _read(path)
    name = path.name.lower().removesuffix(".gz")
    if name == "metadata":  # a distribution's description, after its headers
        headers, _, text = text.partition("\n\n")
        markdown_body = "text/markdown" in headers.lower()
        name = "description.md" if markdown_body else "description.rst"
    if name.endswith(".md"):
        yield from prose_windows(markdown(text), shift)
    elif name.endswith(".rst"):
        yield from prose_windows(restructured_text(text), shift)
    else:
        yield from prose_windows(text.split("\n\n"), shift)


# ---------------------------------------------------------------- roff

# Text-carrying macros whose arguments are words of the sentence (man(7), mdoc(7)).
_FONT_MACROS = frozenset("B I BR IR RB RI BI IB SM SB".split())
_MDOC_INLINE = frozenset(
    "Ad An Ar Cm Dq Dv Em Er Ev Fa Fl Fn Ft Ic Li Nm No Ns Op Pa Pq Ql Qq Sq Sy Tn Va Xr"
    " Aq Bq Brq Oo Oc Ux Bx At Nx Fx Ox".split()
)
# Blocks that are not prose: no-fill and examples, tables, macro definitions.
_BLOCK_ENDS = {"nf": "fi", "EX": "EE", "TS": "TE", "de": "..", "ig": "..", "Bd": "Ed"}
_SPECIAL = {
    "em": "—", "en": "–", "lq": "“", "rq": "”", "oq": "‘", "cq": "’", "aq": "'",
    "dq": '"', "hy": "-", "mi": "-", "bu": "•", "co": "©", "rg": "®", "tm": "™",
}  # fmt: skip
_ESCAPE = re.compile(
    r"""\\(?:
        "(?P<comment>.*)                        # a comment, to the end of the line
      | \((?P<special>..)                       # \(em: a special character
      | \[(?P<named>[^\]]*)\]                   # \[em]
      | [fFgkmMnY*](?:\(..|\[[^\]]*\]|.)        # font, register, string: nothing shown
      | s[-+]?(?:\d\d?|\(\d\d|\[\d+\])          # point size
      | [hHvwlLoDNxbXZSABCR]'[^']*'             # quoted-argument escapes
      | (?P<char>.)                             # \- \e \& \| ...
    )""",
    re.VERBOSE,
)
_CHARACTERS = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "'": "'", "`": "`"}


def _unescape(match: re.Match[str]) -> str:
    special = match.group("special") or match.group("named")
    if special is not None:
        return _SPECIAL.get(special, "")
    char = match.group("char")
    return _CHARACTERS.get(char, "") if char is not None else ""


def roff(text: str) -> Iterator[str]:
    """The paragraphs of a roff (man or mdoc) page: requests, escapes and blocks removed."""
    paragraph: list[str] = []
    closing = ""  # the request that ends the block being skipped
    name = ""  # mdoc's .Nm without an argument repeats the page's name
    for line in text.splitlines():
        control = line[:1] in (".", "'")
        request, _, arguments = line[1:].strip().partition(" ") if control else ("", "", "")
        if closing:
            closing = "" if control and request == closing else closing
            continue
        if not control:
            paragraph.append(_ESCAPE.sub(_unescape, line))
            if not line.strip():
                yield " ".join(paragraph)
                paragraph = []
        elif request in _FONT_MACROS:
            paragraph.append(_ESCAPE.sub(_unescape, arguments.replace('"', "")))
        elif request in _MDOC_INLINE:
            words = [word for word in arguments.split() if word not in _MDOC_INLINE]
            name = name or (" ".join(words) if request == "Nm" else "")
            shown = words or ([name] if request == "Nm" else [])
            paragraph.append(_ESCAPE.sub(_unescape, " ".join(shown).replace('"', "")))
        elif request.startswith('\\"') or request in ("", "\\#"):
            continue  # a comment line, or a lone dot: no break in the text
        else:
            if request in _BLOCK_ENDS and (request != "Bd" or "-literal" in arguments):
                closing = _BLOCK_ENDS[request]
            yield " ".join(paragraph)
            paragraph = []
    yield " ".join(paragraph)


# ---------------------------------------------------------------- Markdown

_MD_INLINE = [
    (re.compile(r"<!--.*?-->", re.DOTALL), " "),
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), " "),  # an image
    (re.compile(r"\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])"), r"\1"),  # a link: its text
    (re.compile(r"<[^>\n]+>"), " "),  # HTML tags, autolinks
    (re.compile(r"\*\*|__|`+|(?<!\w)[*_]|[*_](?!\w)"), ""),  # emphasis, code spans
]
_MD_DROPPED = re.compile(r"^\s*(?:#|\||\[[^\]]+\]:\s|[-=*_]{3,}\s*$)")
_MD_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def markdown(text: str) -> Iterator[str]:
    """Markdown's paragraphs as plain text: code, headings, tables and link targets removed."""
    for pattern, replacement in _MD_INLINE[:1]:
        text = pattern.sub(replacement, text)
    fenced = False
    for block in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in block.splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and not _MD_DROPPED.match(line):
                lines.append(_MD_LIST.sub("", line))
        if lines and not all(line.startswith(("    ", "\t")) for line in lines):
            paragraph = " ".join(lines)  # an indented block is code
            for pattern, replacement in _MD_INLINE[1:]:
                paragraph = pattern.sub(replacement, paragraph)
            yield " ".join(paragraph.split())


# ---------------------------------------------------------------- reStructuredText

_RST_INLINE = [
    (re.compile(r":[\w:+.-]+:`([^`<]*?)\s*(?:<[^>]*>)?`"), r"\1"),  # :role:`text <target>`
    (re.compile(r"`([^`<]*?)\s*(?:<[^>]*>)?`_{0,2}"), r"\1"),  # `text <url>`_
    (re.compile(r"``|\*\*|(?<!\w)\*|\*(?!\w)|\|"), ""),
]
_RST_ADORNMENT = re.compile(r"^\s*([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")
_RST_TABLE = re.compile(r"^\s*(?:\+[-=+]+\+?|=+(?:\s+=+)+)\s*$|^\s*\|")


def restructured_text(text: str) -> Iterator[str]:
    """reST's paragraphs as plain text: directives, literal blocks, titles and tables removed."""
    skipping_under = -1  # the indentation a directive or a literal block is deeper than
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        if skipping_under >= 0 and indent > skipping_under:
            continue
        skipping_under = -1
        if lines and lines[0].lstrip().startswith(".. "):
            skipping_under = indent  # a directive or a comment, and its body
            continue
        kept = [line for line in lines if not _RST_TABLE.match(line)]
        while any(_RST_ADORNMENT.match(line) for line in kept):  # a title: not prose
            kept = [line for line in kept if not _RST_ADORNMENT.match(line)][1:]
        paragraph = " ".join(kept)
        if paragraph.rstrip().endswith("::"):
            skipping_under = indent  # the literal block that follows is code
            paragraph = paragraph.rstrip()[:-1]
        for pattern, replacement in _RST_INLINE:
            paragraph = pattern.sub(replacement, paragraph)
        yield " ".join(paragraph.split())


# ---------------------------------------------------------------- source comments

_BLOCK_COMMENT = re.compile(r"/\*+(.*?)\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"^\s*//+ ?(.*)$")
_COMMENT_MARGIN = re.compile(r"^\s*\*+ ?", re.MULTILINE)


def source_comments(path: Path, shift: int = 0) -> Iterator[str]:
    """The prose windows of the comments of a Go, C or Java file."""
    yield from prose_windows(comments(path.read_text(encoding="utf-8")), shift)


def zipped_comments(archive: Path, shift: int = 0) -> Iterator[str]:
    """The prose windows of the comments of every ``.java`` file in a zip, in name order."""
    with zipfile.ZipFile(archive) as members:
        for member in sorted(name for name in members.namelist() if name.endswith(".java")):
            source = members.read(member).decode("utf-8", errors="replace")
            yield from prose_windows(comments(source), shift)


def comments(source: str) -> Iterator[str]:
    """Paragraphs of ``/* */`` comments and of runs of ``//`` lines."""
    for found in _BLOCK_COMMENT.finditer(source):
        yield from _COMMENT_MARGIN.sub("", found.group(1)).split("\n\n")
    run: list[str] = []
    for line in source.splitlines():
        matched = _LINE_COMMENT.match(line)
        if matched and matched.group(1).strip():
            run.append(matched.group(1))
        elif run:
            yield " ".join(run)
            run = []
    yield " ".join(run)
