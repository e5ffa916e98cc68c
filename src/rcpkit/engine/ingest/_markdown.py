"""Markdown headings (ATX ``# Title`` and setext underlines), found outside code fences.

Used twice: the loader takes the first level-1 heading as a title, and the chunker
starts a new chunk at every heading and records the heading path above each chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Heading", "blank_site_directives", "find_headings", "markdown_title"]

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
# An attribute list closing a heading (Python-Markdown attr_list, mkdocs, Pandoc):
# `## Advanced middleware { #advanced-middleware }`, `{: .note }`, `{#id lang=en}`.
_ATTRIBUTE = r"(?:[#.][\w:-]+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s}]+))"
_ATTRIBUTE_LIST = re.compile(
    rf"[ \t]*\{{:?[ \t]*{_ATTRIBUTE}(?:[ \t]+{_ATTRIBUTE})*[ \t]*\}}[ \t]*$"
)
# A line that only pulls another file in when the docs site is built: the file's
# own text is indexed where it lives, the directive itself is no content (issue 36:
# `{* ../../docs_src/app.py hl[3] *}` lines were indexed). mkdocs macros and
# FastAPI's `{* ... *}`, markdown-include `{! ... !}`, pymdownx.snippets `--8<--`.
_INCLUDE_LINE = re.compile(
    r"^[ \t]*(?:\{\*[^\n]*\*\}|\{![^\n]*!\}|-{1,2}8<-{1,2}[^\n]*)[ \t]*$", re.MULTILINE
)
_HEADING_ATTRIBUTES = re.compile(rf"(?<=\S){_ATTRIBUTE_LIST.pattern}")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
# A line that cannot be a setext heading's text even when underlined.
_NOT_PARAGRAPH = re.compile(r" {4}|\t| {0,3}(?:[-*+>]|\d{1,9}[.)])(?:[ \t]|$)")


@dataclass(frozen=True, slots=True)
class Heading:
    start: int
    """Offset of the heading's first line in the text."""
    end: int
    """Offset just past the heading's last line (the underline of a setext heading)."""
    level: int
    title: str


def markdown_title(text: str) -> str | None:
    """The first level-1 heading, which Markdown documents use as their title."""
    return next((heading.title for heading in find_headings(text) if heading.level == 1), None)


def blank_site_directives(text: str) -> str:
    """``text`` with include lines and heading attribute lists blanked (offsets stay raw).

    Both are site-build instructions: an anchor id is not a word of the section.
    """
    text = _INCLUDE_LINE.sub(_blank, text)
    for heading in find_headings(text):  # headings as Markdown reads them: none in fences
        end = text.find("\n", heading.start)
        end = len(text) if end < 0 else end
        line = _HEADING_ATTRIBUTES.sub(_blank, text[heading.start : end])
        text = text[: heading.start] + line + text[end:]  # same length: offsets hold
    return text


def _blank(found: re.Match[str]) -> str:
    return " " * len(found.group(0))


def find_headings(text: str) -> list[Heading]:
    """Every heading in document order, skipping fenced code and YAML front matter."""
    headings: list[Heading] = []
    lines = text.split("\n")
    offsets = _line_offsets(lines)
    fence: str | None = None
    index = _front_matter_end(lines)
    while index < len(lines):
        line = lines[index]
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and _closes(fence_match.group(1), fence):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        elif (atx := _atx_heading(line)) is not None:
            headings.append(Heading(offsets[index], offsets[index] + len(line), *atx))
        elif (level := _setext_level(lines, index)) is not None:
            # The underline was already read as text; the heading is the line above it.
            end = offsets[index] + len(line)
            title = _ATTRIBUTE_LIST.sub("", lines[index - 1]).strip()
            headings.append(Heading(offsets[index - 1], end, level, title))
        index += 1
    return headings


def _line_offsets(lines: list[str]) -> list[int]:
    offsets: list[int] = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    return offsets


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def _closes(marker: str, fence: str) -> bool:
    return marker[0] == fence[0] and len(marker) >= len(fence)


def _atx_heading(line: str) -> tuple[int, str] | None:
    if "#" not in line[:4]:
        return None
    match = _ATX.match(line)
    if match is None:
        return None
    title = _ATTRIBUTE_LIST.sub("", _ATX_CLOSING.sub("", match.group(2) or ""))
    title = _ATX_CLOSING.sub("", title).strip()
    return (len(match.group(1)), title) if title else None


def _setext_level(lines: list[str], index: int) -> int | None:
    line = lines[index]
    if index == 0 or not line or line.lstrip()[:1] not in ("=", "-"):
        return None
    match = _SETEXT.match(line)
    if match is None:
        return None
    text_line = lines[index - 1]
    if not text_line.strip() or _NOT_PARAGRAPH.match(text_line) or _is_marker(text_line):
        return None
    # Only a one-line paragraph: a rule under a longer paragraph is far more often
    # a thematic break than a heading in the Markdown people actually write.
    if index >= 2 and lines[index - 2].strip() and not _is_marker(lines[index - 2]):
        return None
    return 1 if match.group(1)[0] == "=" else 2


def _is_marker(line: str) -> bool:
    return bool(_FENCE.match(line) or _atx_heading(line) or _SETEXT.match(line))
