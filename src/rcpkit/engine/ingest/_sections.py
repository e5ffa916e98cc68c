"""Hard chunk boundaries: every Markdown heading, PDF page and code definition starts one.

No chunk crosses a section, so a chunk has one heading path and one page.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcpkit.engine.ingest._code import code_boundaries
from rcpkit.engine.ingest._markdown import Heading, find_headings
from rcpkit.engine.ingest._types import SourceDocument

__all__ = ["Section", "find_sections"]


@dataclass(frozen=True, slots=True)
class Section:
    start: int
    end: int
    heading_path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Boundary:
    offset: int
    heading: Heading | None


def find_sections(document: SourceDocument) -> list[Section]:
    """Sections covering the text in order, each with the heading path in force there."""
    text = document.text
    if document.modality == "code":
        code = code_boundaries(document)  # symbol paths; None: no grammar, line boundaries
        if code is not None:
            ends = [mark.offset for mark in code[1:]] + [len(text)]
            return [Section(m.offset, end, m.path) for m, end in zip(code, ends, strict=True)]
    boundaries = [_Boundary(0, None)]
    if document.modality == "text":
        boundaries += [_Boundary(heading.start, heading) for heading in find_headings(text)]
    if document.pages:
        boundaries += [
            _Boundary(page.start, None) for page in document.pages if page.end > page.start
        ]
        if document.modality == "image":
            # An index/add document's image pages sit among its text parts: the text
            # after an image is not that image's page.
            boundaries += [
                _Boundary(page.end, None) for page in document.pages if page.end < len(text)
            ]
    # A heading at a page's first character is one boundary; keep the heading.
    boundaries.sort(key=lambda boundary: (boundary.offset, boundary.heading is None))
    sections: list[Section] = []
    stack: list[Heading] = []
    for index, boundary in enumerate(boundaries):
        if index and boundary.offset == boundaries[index - 1].offset:
            continue
        if boundary.heading is not None:
            while stack and stack[-1].level >= boundary.heading.level:
                stack.pop()
            stack.append(boundary.heading)
        end = _next_offset(boundaries, index, len(text))
        sections.append(Section(boundary.offset, end, tuple(h.title for h in stack)))
    return _merge_bare_headings(text, sections, boundaries)


def _next_offset(boundaries: list[_Boundary], index: int, default: int) -> int:
    offset = boundaries[index].offset
    for later in boundaries[index + 1 :]:
        if later.offset > offset:
            return later.offset
    return default


def _merge_bare_headings(
    text: str, sections: list[Section], boundaries: list[_Boundary]
) -> list[Section]:
    """Fold a heading with nothing under it into the subsection that follows it.

    ``# Install`` directly followed by ``## On Linux`` would otherwise be a chunk
    holding one word; folded, the chunk carries both headings and the Linux text.
    """
    headings = {b.offset: b.heading for b in boundaries if b.heading is not None}
    page_starts = {b.offset for b in boundaries if b.heading is None and b.offset}
    merged: list[Section] = []
    for section in reversed(sections):
        heading = headings.get(section.start)
        if merged and heading is not None and _is_bare(text, section, heading):
            following = merged[-1]
            child = headings.get(following.start)
            if (
                child is not None
                and child.level > heading.level
                and following.start not in page_starts
            ):
                merged[-1] = Section(section.start, following.end, following.heading_path)
                continue
        merged.append(section)
    merged.reverse()
    return merged


def _is_bare(text: str, section: Section, heading: Heading) -> bool:
    return not text[heading.end : section.end].strip()
