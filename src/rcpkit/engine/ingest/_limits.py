"""The last word on size: halve any chunk its exact token count says is too big."""

from __future__ import annotations

from dataclasses import dataclass

from rcpkit.engine.ingest._boundaries import ATOM
from rcpkit.engine.ingest._tokens import TokenCounter, count_in_batches

__all__ = ["Span", "enforce_limit"]

# Each round halves every offender, so this bounds even a hostile counter.
_MAX_ROUNDS = 64


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    heading_path: tuple[str, ...]
    estimate: float
    """Estimated tokens (word by word), for calibration."""


def enforce_limit(
    text: str,
    spans: list[Span],
    counts: list[int],
    count_tokens: TokenCounter,
    max_tokens: int,
) -> list[Span]:
    """``spans`` with every one over ``max_tokens`` halved, recounted, and halved again."""
    pending: list[tuple[Span, int]] = list(zip(spans, counts, strict=True))
    for _ in range(_MAX_ROUNDS):
        result: list[tuple[Span, int | None]] = []
        for span, count in pending:
            halves = _halve(text, span) if count > max_tokens else None
            if halves is None:
                result.append((span, count))
            else:
                result.extend((half, None) for half in halves)
        uncounted = [span for span, count in result if count is None]
        if not uncounted:
            break
        fresh = iter(count_in_batches(count_tokens, [text[s.start : s.end] for s in uncounted]))
        pending = [(span, next(fresh) if count is None else count) for span, count in result]
    return _in_document_order([span for span, _ in pending])


def _in_document_order(spans: list[Span]) -> list[Span]:
    """Sorted, without a span that lies inside another.

    Halving two overlapping chunks can give the same half twice, or a half inside
    its neighbour's; once sorted by start (longest first), such a span ends no later
    than one already kept, and the one kept holds it whole.
    """
    kept: list[Span] = []
    for span in sorted(spans, key=lambda span: (span.start, -span.end)):
        if not kept or span.end > kept[-1].end:
            kept.append(span)
    return kept


def _halve(text: str, span: Span) -> tuple[Span, Span] | None:
    """Two spans split at the strongest gap near the middle; mid-word only for one word."""
    atoms = list(ATOM.finditer(text, span.start, span.end))
    if len(atoms) >= 2:
        split = _middle_gap(text, [(a.start(), a.end()) for a in atoms], span)
        left_end, right_start = atoms[split - 1].end(), atoms[split].start()
    elif atoms and atoms[0].end() - atoms[0].start() >= 2:
        # Cut inside the word itself, never inside indentation kept before it.
        left_end = right_start = (atoms[0].start() + atoms[0].end()) // 2
    else:
        return None  # one character: nothing left to cut
    half = span.estimate / 2
    return (
        Span(span.start, left_end, span.heading_path, half),
        Span(right_start, span.end, span.heading_path, half),
    )


def _middle_gap(text: str, atoms: list[tuple[int, int]], span: Span) -> int:
    """Index of the atom after the chosen gap: blank line > newline > space, near the middle."""
    middle = (span.start + span.end) / 2
    quarter = (span.end - span.start) / 4

    def rank(index: int) -> tuple[bool, int, float]:
        gap_start, gap_end = atoms[index - 1][1], atoms[index][0]
        central = abs(gap_start - middle) <= quarter
        return (central, min(text.count("\n", gap_start, gap_end), 2), -abs(gap_start - middle))

    return max(range(1, len(atoms)), key=rank)
