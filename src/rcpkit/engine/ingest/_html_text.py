"""Tag events to readable plain text, shared by both HTML parser backends.

Headings are written as Markdown ATX lines (``## Pricing``) so that the chunker's
heading-aware splitting and heading paths work the same for HTML as for Markdown.
"""

from __future__ import annotations

import re

__all__ = ["BOILERPLATE_TAGS", "TextRenderer"]

# Page furniture rather than content; `header`/`footer` inside `<article>` or `<main>`
# are the article's own heading and byline, so they are kept there.
BOILERPLATE_TAGS = frozenset(
    "script style noscript template nav header footer aside form"
    " iframe svg canvas button select dialog head".split()
)
_ARTICLE_TAGS = frozenset(["article", "main"])
_SECTION_KEEPERS = frozenset(["header", "footer"])
_BLOCK_TAGS = frozenset(
    "p div section article main blockquote pre table ul ol"
    " dl figure figcaption address details summary body".split()
)
_LINE_TAGS = frozenset(["li", "tr", "dt", "dd", "br", "hr", "caption"])
_CELL_TAGS = frozenset(["td", "th"])
_VOID_TAGS = frozenset(
    "area base br col embed hr img input link meta param source track wbr".split()
)
_HEADING_LEVELS = {f"h{level}": level for level in range(1, 7)}
_SPACES = re.compile(r"[ \t\f\v\n]+")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")
_MANY_NEWLINES = re.compile(r"\n{3,}")


class TextRenderer:
    """Receives start/end/text events in document order and builds the text."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._skipping: list[str] = []
        self._article_depth = 0
        self._pre_depth = 0

    def start(self, tag: str, *, hidden: bool = False) -> bool:
        """Open ``tag``; False when its subtree is boilerplate and need not be walked."""
        if tag in _VOID_TAGS:
            # Void elements never get an end event, so they can neither skip nor nest.
            if not self._skipping:
                self._break(tag)
            return False
        if self._skipping:
            # Only a nested tag of a skipping one's name needs counting, to find its end;
            # counting others would wait forever on the ones HTML lets go unclosed.
            if tag in self._skipping:
                self._skipping.append(tag)
            return False
        if hidden or self._is_boilerplate(tag):
            self._skipping.append(tag)
            return False
        if tag in _ARTICLE_TAGS:
            self._article_depth += 1
        if tag == "pre":
            self._pre_depth += 1
        self._break(tag)
        if tag in _HEADING_LEVELS:
            self._parts.append("#" * _HEADING_LEVELS[tag] + " ")
        return True

    def end(self, tag: str) -> None:
        if tag in _VOID_TAGS:
            return
        if self._skipping:
            if self._skipping[-1] == tag:
                self._skipping.pop()
            return
        if tag in _ARTICLE_TAGS and self._article_depth:
            self._article_depth -= 1
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
        # Lines and cells break where the next one starts: two breaks would be a paragraph.
        if tag not in _LINE_TAGS and tag not in _CELL_TAGS:
            self._break(tag)

    def text(self, data: str) -> None:
        if self._skipping or not data:
            return
        if self._pre_depth:
            self._parts.append(data)
            return
        collapsed = _SPACES.sub(" ", data)
        if not self._parts or self._parts[-1].endswith((" ", "\n")):
            collapsed = collapsed.lstrip(" ")
        if collapsed:
            self._parts.append(collapsed)

    def result(self) -> str:
        text = _TRAILING_SPACE.sub("\n", "".join(self._parts).replace("\u00a0", " "))
        return _MANY_NEWLINES.sub("\n\n", text).strip()

    def _is_boilerplate(self, tag: str) -> bool:
        if tag in _SECTION_KEEPERS and self._article_depth:
            return False
        return tag in BOILERPLATE_TAGS

    def _break(self, tag: str) -> None:
        if tag in _BLOCK_TAGS or tag in _HEADING_LEVELS:
            self._newline("\n\n")
        elif tag in _LINE_TAGS:
            self._newline("\n")
        elif tag in _CELL_TAGS:
            self._parts.append(" ")

    def _newline(self, newline: str) -> None:
        if self._parts:
            self._parts[-1] = self._parts[-1].rstrip(" \t")
        self._parts.append(newline)
