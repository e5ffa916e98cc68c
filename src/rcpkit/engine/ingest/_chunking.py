"""Documents to token-bounded, overlapping chunks with exact character offsets.

How a chunk is made, cheapest step first:

1. Sections: every Markdown heading and PDF page is a hard boundary (`_sections`);
   consecutive sections that fit the budget together are then one chunk (below).
2. Atoms: whitespace-free runs, each gap rated paragraph > sentence > line > word
   (for code: top-level definition > blank line > statement > line; `_boundaries`).
3. Costs: each *distinct* atom is counted once with the caller's tokenizer, in
   batches; a window's cost is then a prefix-sum difference, so packing is linear.
4. Packing: greedy windows ending at their strongest gap past half the budget,
   overlapping by about ``overlap_tokens`` (`_packing`).
5. Check: every chunk text is counted exactly in one batch. A tokenizer whose
   counts do not add up word by word (BPE merges, rounding) is calibrated once
   and packed again; any chunk still over ``max_tokens`` is halved until it fits.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from rcpkit.engine.ingest._boundaries import DEFINITION, Atoms, find_atoms
from rcpkit.engine.ingest._limits import Span, enforce_limit
from rcpkit.engine.ingest._packing import pack, split_oversized
from rcpkit.engine.ingest._sections import Section, find_sections
from rcpkit.engine.ingest._tokens import TokenCounter, count_in_batches
from rcpkit.engine.ingest._types import ChunkSpan, SourceDocument

__all__ = ["chunk_document"]

# Recalibrate only when word-by-word counts are off by more than this share...
_CALIBRATION_TOLERANCE = 0.1
# ...and then aim a little under the budget, as the estimate is an average.
_CALIBRATION_HEADROOM = 0.97


def chunk_document(
    document: SourceDocument,
    count_tokens: TokenCounter,
    *,
    max_tokens: int = 256,
    overlap_tokens: int = 32,
) -> list[ChunkSpan]:
    """Chunks of ``document`` in order; ``chunk.text == document.text[start:end]``.

    ``count_tokens`` is the embedding model's batch counter; every chunk text counts
    at most ``max_tokens`` with it (special tokens it adds included), so a caller that
    prepends `contextual_prefix` should pass ``max_tokens`` less the prefix's tokens.
    Overlap is capped at half the budget (so that the default 32 works with any
    ``max_tokens``, and every chunk moves forward).
    """
    _check_limits(max_tokens, overlap_tokens)
    overhead = max(count_in_batches(count_tokens, [""])[0], 0)
    budget = max_tokens - overhead
    if budget < 1:
        raise ValueError(f"max_tokens={max_tokens} leaves no room beside {overhead} fixed tokens")
    text = document.text
    sections = find_sections(document)
    section_atoms = [find_atoms(text, s.start, s.end, document.modality) for s in sections]
    costs = _atom_costs(text, section_atoms, count_tokens, overhead)
    overlap = min(float(overlap_tokens), budget / 2)
    plan = _Plan(document, sections, section_atoms, costs)
    spans = plan.spans(float(budget), overlap)
    counts = count_in_batches(count_tokens, [text[span.start : span.end] for span in spans])
    ratio = _calibration(spans, counts, overhead)
    if ratio is not None:
        spans = plan.spans(budget / ratio * _CALIBRATION_HEADROOM, overlap / ratio)
        counts = count_in_batches(count_tokens, [text[span.start : span.end] for span in spans])
    spans = enforce_limit(text, spans, counts, count_tokens, max_tokens)
    return _chunk_spans(document, spans)


def _check_limits(max_tokens: int, overlap_tokens: int) -> None:
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    if overlap_tokens < 0:
        raise ValueError(f"overlap_tokens must not be negative, not {overlap_tokens}")


def _atom_costs(
    text: str, section_atoms: list[Atoms], count_tokens: TokenCounter, overhead: int
) -> list[list[float]]:
    words = [
        [text[start:end] for start, end in zip(atoms.starts, atoms.ends, strict=True)]
        for atoms in section_atoms
    ]
    distinct = list(dict.fromkeys(word for section in words for word in section))
    counts = count_in_batches(count_tokens, distinct)
    # Every atom is at least one token, whatever a counter says about it alone.
    cost_of = {
        word: float(max(count - overhead, 1)) for word, count in zip(distinct, counts, strict=True)
    }
    return [[cost_of[word] for word in section] for section in words]


_Part = tuple[Section, Atoms, list[float]]


class _Plan:
    """The parts of a document that do not change when it is packed again."""

    def __init__(
        self,
        document: SourceDocument,
        sections: list[Section],
        section_atoms: list[Atoms],
        costs: list[list[float]],
    ) -> None:
        self._document = document
        self._parts = [
            part
            for part in zip(sections, section_atoms, costs, strict=True)
            if len(part[1])  # a section of whitespace only holds nothing to pack
        ]

    def spans(self, budget: float, overlap: float) -> list[Span]:
        spans: list[Span] = []
        for section, atoms, costs in self._grouped(budget):
            fitted, fitted_costs = split_oversized(atoms, costs, budget)
            for first, stop in pack(fitted, fitted_costs, budget, overlap):
                estimate = sum(fitted_costs[first:stop])
                start = self._start(section, fitted.starts[first])
                spans.append(Span(start, fitted.ends[stop - 1], section.heading_path, estimate))
        return spans

    def _grouped(self, budget: float) -> list[_Part]:
        """Runs of consecutive sections that fit ``budget`` together, each run one part.

        A heading is a boundary worth keeping only when the text under it is worth a
        chunk of its own: release notes (a heading per version, three lines under
        each) made thousands of chunks of a few words each, and a bare
        ``class X(Y):`` outranked real answers (issue 36). Prose sections that fit
        together are one chunk, carrying the heading path they share (greedy, in
        document order). A code definition keeps its own chunk and symbol path; only
        a tiny section (a class line above its first method, an import block) goes
        with the definition after it, or the one before it at the end. Pages stay
        hard boundaries: a chunk cites one page.
        """
        if self._document.pages:
            return self._parts
        if self._document.modality == "code":
            return self._folded_code(budget)
        grouped: list[_Part] = []
        for part in self._parts:
            if grouped and _cost(grouped[-1]) + _cost(part) <= budget:
                grouped[-1] = _joined(grouped[-1], part, _shared(grouped[-1], part))
            else:
                grouped.append(part)
        return grouped

    def _folded_code(self, budget: float) -> list[_Part]:
        grouped: list[_Part] = []
        pending: _Part | None = None  # one-line sections waiting for the next definition
        for part in self._parts:
            tiny = self._tiny(part[0])
            if pending is not None and _cost(pending) + _cost(part) <= budget:
                part = _joined(pending, part, part[0].heading_path)
            elif pending is not None:
                grouped.append(pending)
            pending = part if tiny else None
            if not tiny:
                grouped.append(part)
        if pending is not None:
            if grouped and _cost(grouped[-1]) + _cost(pending) <= budget:
                grouped[-1] = _joined(grouped[-1], pending, grouped[-1][0].heading_path)
            else:
                grouped.append(pending)
        return grouped

    def _tiny(self, section: Section) -> bool:
        """One line: a bare ``class X(Y):``, an import, not a definition with a body."""
        return "\n" not in self._document.text[section.start : section.end].strip()

    def _start(self, section: Section, start: int) -> int:
        """For code, a chunk starting a line keeps that line's indentation."""
        if self._document.modality != "code":
            return start
        text = self._document.text
        line_start = max(text.rfind("\n", 0, start) + 1, section.start)
        return line_start if not text[line_start:start].strip() else start


def _cost(part: _Part) -> float:
    return sum(part[2])


def _shared(first: _Part, second: _Part) -> tuple[str, ...]:
    """The heading path two parts share (the sections above both)."""
    mine, theirs = first[0].heading_path, second[0].heading_path
    shared = 0
    while shared < min(len(mine), len(theirs)) and mine[shared] == theirs[shared]:
        shared += 1
    return mine[:shared]


def _joined(first: _Part, second: _Part, path: tuple[str, ...]) -> _Part:
    """Two adjacent parts as one under ``path``; the gap between them is the strongest kind."""
    (section, atoms, costs), (next_section, next_atoms, next_costs) = first, second
    joined = Section(section.start, next_section.end, path)
    strengths = [*atoms.strengths, DEFINITION, *next_atoms.strengths[1:]]
    both = Atoms([*atoms.starts, *next_atoms.starts], [*atoms.ends, *next_atoms.ends], strengths)
    return joined, both, [*costs, *next_costs]


def _calibration(spans: list[Span], counts: list[int], overhead: int) -> float | None:
    """Real tokens per estimated token, when the estimate is off enough to matter."""
    estimated = sum(span.estimate for span in spans)
    if len(spans) < 2 or estimated <= 0:
        return None
    ratio = sum(max(count - overhead, 0) for count in counts) / estimated
    if ratio <= 0 or abs(ratio - 1) <= _CALIBRATION_TOLERANCE:
        return None
    return ratio


def _chunk_spans(document: SourceDocument, spans: Sequence[Span]) -> list[ChunkSpan]:
    pages = [page for page in document.pages or [] if page.end > page.start]
    page_starts = [page.start for page in pages]
    chunks: list[ChunkSpan] = []
    for index, span in enumerate(spans):
        position = bisect_right(page_starts, span.start) - 1
        # A chunk that starts past its page's end (text after an image) has no page.
        inside = pages and position >= 0 and span.start < pages[position].end
        page = pages[position].page if inside else None
        text = document.text[span.start : span.end]
        chunks.append(ChunkSpan(index, span.start, span.end, text, span.heading_path, page))
    return chunks
