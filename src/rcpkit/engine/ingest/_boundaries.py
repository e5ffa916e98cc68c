"""Atoms (whitespace-free runs of text) and how good a place the gap before each is to split.

Chunks are made of whole atoms, so a chunk never starts or ends in whitespace and
never cuts a word; only an atom too long for any chunk is cut, at `MID_WORD` gaps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rcpkit.engine.ingest._types import Modality

__all__ = [
    "ATOM",
    "DEFINITION",
    "LINE",
    "MID_WORD",
    "PARAGRAPH",
    "SENTENCE",
    "WORD",
    "Atoms",
    "find_atoms",
]

MID_WORD, WORD, LINE, SENTENCE, PARAGRAPH, DEFINITION = range(6)

# CJK sentence marks end an atom too: such text has no spaces for whole paragraphs.
ATOM = re.compile(r"[^\s。！？]+[。！？]*|[。！？]+")
_SENTENCE_END = frozenset(".!?…。！？")
_CLOSERS = frozenset("\"'”’)]»")
_LIST_MARKER = re.compile(r"[-*+•|]|\d{1,9}[.)]|#{1,6}")
_CODE_DEFINITION = re.compile(
    r"(?:async\s+def|def|class|function|func|fn|impl|struct|enum|trait|mod|interface|type"
    r"|module|export|pub(?:\([\w:]+\))?|public|private|protected|internal|static|abstract"
    r"|final|object|namespace|template|const|let|var|local\s+function|sub|package)\b"
)
# Lines that belong to the definition below them: decorators, attributes, doc comments.
_CODE_PREAMBLE = re.compile(r"@|#|//|/\*| \*|--|;")
_MAX_PREAMBLE_LINES = 50


@dataclass(slots=True)
class Atoms:
    """Parallel lists; ``strengths[i]`` rates the gap before atom ``i`` (0 for the first)."""

    starts: list[int]
    ends: list[int]
    strengths: list[int]

    def __len__(self) -> int:
        return len(self.starts)


def find_atoms(text: str, start: int, end: int, modality: Modality) -> Atoms:
    """The atoms of ``text[start:end]`` with the strength of every gap."""
    starts: list[int] = []
    ends: list[int] = []
    for match in ATOM.finditer(text, start, end):
        starts.append(match.start())
        ends.append(match.end())
    if modality == "code":
        strengths = _code_strengths(text, start, end, starts, ends)
    else:
        strengths = _prose_strengths(text, starts, ends)
    return Atoms(starts, ends, strengths)


def _prose_strengths(text: str, starts: list[int], ends: list[int]) -> list[int]:
    strengths = [WORD] * len(starts)
    for index in range(1, len(starts)):
        previous_end, start = ends[index - 1], starts[index]
        newlines = text.count("\n", previous_end, start)
        if newlines >= 2:
            strengths[index] = PARAGRAPH
        elif _ends_sentence(text, starts[index - 1], previous_end):
            strengths[index] = SENTENCE
        elif newlines:
            # A new list item or table row is as good a split as a new sentence.
            is_item = _LIST_MARKER.fullmatch(text, start, ends[index]) is not None
            strengths[index] = SENTENCE if is_item else LINE
    return strengths


def _ends_sentence(text: str, start: int, end: int) -> bool:
    last = end - 1
    while last > start and text[last] in _CLOSERS:
        last -= 1
    return text[last] in _SENTENCE_END


def _code_strengths(
    text: str, start: int, end: int, starts: list[int], ends: list[int]
) -> list[int]:
    line_strengths = _code_line_strengths(text, start, end)
    strengths = [WORD] * len(starts)
    for index in range(1, len(starts)):
        if "\n" in text[ends[index - 1] : starts[index]]:
            line_start = text.rfind("\n", 0, starts[index]) + 1
            strengths[index] = line_strengths.get(line_start, LINE)
    return strengths


def _code_line_strengths(text: str, start: int, end: int) -> dict[int, int]:
    """Strength of each line start that differs from a plain `LINE`."""
    lines = text[start:end].split("\n")
    offsets: list[int] = []
    position = start
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    strengths: dict[int, int] = {}
    after_blank = True
    for index, line in enumerate(lines):
        if not line.strip():
            after_blank = True
            continue
        at_margin = not line[0].isspace()
        if at_margin and _CODE_DEFINITION.match(line):
            head = _preamble_start(lines, index)
            for covered in range(head, index + 1):
                strengths[offsets[covered]] = WORD  # keep decorators with their definition
            strengths[offsets[head]] = DEFINITION
        elif after_blank:
            strengths[offsets[index]] = PARAGRAPH
        elif at_margin and line[0] in "})]":
            strengths[offsets[index]] = WORD  # a closing bracket ends the block above it
        elif at_margin:
            strengths[offsets[index]] = SENTENCE  # a new top-level statement
        after_blank = False
    return strengths


def _preamble_start(lines: list[str], index: int) -> int:
    head = index
    while (
        head > 0
        and index - head < _MAX_PREAMBLE_LINES
        and lines[head - 1].strip()
        and _CODE_PREAMBLE.match(lines[head - 1])
    ):
        head -= 1
    return head
