"""One report for every ``rcpkit bench`` suite: the rows they measure and how they print.

Each suite's ``run()`` returns a list of :class:`Figure`. This module is the
only place that turns figures into text: the terminal table, the Markdown
table, the JSON document, and the generated block of the README.

A figure's ratio is always ``value ÷ baseline_value``, so a target set by an
issue ("≥ 0.8× the raw embedder", "≤ 1.5× the raw index calls") reads as a
bound on it; ``higher_is_better`` says which way the bound points.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "BEGIN",
    "END",
    "BenchUnavailable",
    "Figure",
    "Scale",
    "collecting",
    "machine",
    "provenance",
    "record",
    "render_json",
    "render_markdown",
    "render_table",
    "replace_block",
    "today",
    "update_file",
]

# How many iterations a run makes: "full" for published figures, "quick" for a
# few minutes in all, "smoke" only to check the command works (figures meaningless).
Scale = Literal["full", "quick", "smoke"]

BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"

_COLUMNS = ("suite", "benchmark", "rcpkit", "baseline figure", "baseline", "ratio", "target")


class BenchUnavailable(RuntimeError):
    """A suite cannot run on this machine (a missing tool); the message says what to install."""


@dataclass(frozen=True)
class Figure:
    """One measured row: rcpkit's figure and, where there is one, its same-run baseline."""

    suite: str
    name: str
    value: float
    unit: str
    baseline: str = ""  # what the figure is compared with; "" for an absolute figure
    baseline_value: float | None = None
    higher_is_better: bool = True
    target: float | None = None  # a bound on the ratio, set by an issue
    note: str = ""  # context that is not the headline figure (p95, errors, stage split)

    @property
    def ratio(self) -> float | None:
        if self.baseline_value is None or self.baseline_value == 0:
            return None
        return self.value / self.baseline_value

    @property
    def target_met(self) -> bool | None:
        ratio = self.ratio
        if self.target is None or ratio is None:
            return None
        # Round as printed: a recall of 0.9999 shown as 1.00× meets "≥ 1.00×".
        shown = round(ratio, 2)
        return shown >= self.target if self.higher_is_better else shown <= self.target

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "target_met": self.target_met}


# --- collecting rows from helpers that measure and report in one step ---

_collected: ContextVar[list[Figure]] = ContextVar("rcpkit_bench_figures")


@contextmanager
def collecting() -> Iterator[list[Figure]]:
    """Gather every :func:`record` call made inside the block into the yielded list.

    It lets a suite whose nested helpers each measure and report (the engine's)
    add rows without threading a list through every helper's signature.
    """
    figures: list[Figure] = []
    token = _collected.set(figures)
    try:
        yield figures
    finally:
        _collected.reset(token)


def record(figure: Figure) -> None:
    """Add a row to the innermost :func:`collecting` block."""
    if os.environ.get("RCPKIT_BENCH_PROGRESS"):  # each row as it is measured (long runs)
        print(
            f"bench: {figure.name}: {figure.value:.4g} {figure.unit}"
            f" (baseline {figure.baseline_value}) {figure.note}",
            file=sys.stderr,
            flush=True,
        )
    try:
        _collected.get().append(figure)
    except LookupError:
        raise RuntimeError("record() called outside a collecting() block") from None


# --- cells ---


def _number(value: float, unit: str) -> str:
    if math.isnan(value):
        return "n/a"
    if unit == "recall":
        return f"{value:.3f}"
    magnitude = abs(value)
    if magnitude >= 100 or float(value).is_integer():
        text = f"{value:,.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}"


def _times(ratio: float) -> str:
    if ratio >= 100:
        return f"{ratio:,.0f}×"
    if ratio >= 0.01 or ratio <= 0:
        return f"{ratio:.2f}×"
    # Two significant digits without an exponent: 0.000084×, not 8.4e-05×.
    return f"{ratio:.{1 - math.floor(math.log10(ratio))}f}×"


def _cells(figure: Figure) -> tuple[str, ...]:
    ratio = figure.ratio
    baseline_value = (
        "" if figure.baseline_value is None else _number(figure.baseline_value, figure.unit)
    )
    ratio_cell = ""
    if ratio is not None:
        ratio_cell = f"{_times(ratio)} {'↑' if figure.higher_is_better else '↓'} better"
    target_cell = ""
    if figure.target is not None:
        bound = "≥" if figure.higher_is_better else "≤"
        met = {True: " ✓", False: " ✗ missed", None: ""}[figure.target_met]
        target_cell = f"{bound} {figure.target:.2f}×{met}"
    return (
        figure.suite,
        figure.name,
        _number(figure.value, figure.unit),
        baseline_value,
        figure.baseline,
        ratio_cell,
        target_cell,
        figure.note,
    )


_LEGEND = (
    "ratio = rcpkit ÷ baseline, both measured in the same run; "
    "↑ better: higher is better, ↓ better: lower is better; "
    "target: the bound an issue set on the ratio (✓ met)."
)


def _has_notes(figures: Sequence[Figure]) -> bool:
    return any(figure.note for figure in figures)


def render_table(figures: Sequence[Figure]) -> str:
    """The plain-text table for a terminal, with the legend under it."""
    header = _COLUMNS + (("notes",) if _has_notes(figures) else ())
    rows = [header] + [_cells(figure)[: len(header)] for figure in figures]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))

    lines = [line(header), "  ".join("-" * width for width in widths)]
    lines += [line(row) for row in rows[1:]]
    return "\n".join(text.rstrip() for text in [*lines, "", _LEGEND]) + "\n"


def render_markdown(figures: Sequence[Figure]) -> str:
    """The same table as GitHub Markdown, with the legend under it."""
    header = _COLUMNS + (("notes",) if _has_notes(figures) else ())
    right = {"rcpkit", "baseline figure", "ratio"}
    rule = ["---:" if column in right else "---" for column in header]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    lines = [line(header), "|" + "|".join(rule) + "|"]
    lines += [line(_cells(figure)[: len(header)]) for figure in figures]
    return "\n".join([*lines, "", _LEGEND]) + "\n"


def render_json(figures: Sequence[Figure], **meta: Any) -> str:
    """A JSON document: ``meta`` (command, date, machine, …) and the rows."""
    document = {**meta, "figures": [figure.as_dict() for figure in figures]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# --- provenance ---


def machine() -> str:
    """'2 cores, Intel(R) Xeon(R) Processor, Python 3.11.7, Linux' for this machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    python = sys.version.split()[0]
    return f"{os.cpu_count()} cores, {model}, Python {python}, {platform.system()}"


def today() -> str:
    return date.today().isoformat()


# --- the generated block of a Markdown file ---


def replace_block(text: str, block: str, name: str = "the text") -> str:
    """``text`` with everything between the bench markers replaced by ``block``.

    Everything outside the markers, and the markers themselves, is kept byte
    for byte. Raises ``ValueError`` unless each marker occurs exactly once,
    begin before end.
    """
    begins, ends = text.count(BEGIN), text.count(END)
    if begins != 1 or ends != 1:
        raise ValueError(
            f"{name} needs exactly one {BEGIN} and one {END} line around the generated "
            f"benchmark block (found {begins} and {ends})"
        )
    start, stop = text.index(BEGIN) + len(BEGIN), text.index(END)
    if stop < start:
        raise ValueError(f"{name}: {END} comes before {BEGIN}")
    return text[:start] + "\n" + block.strip("\n") + "\n" + text[stop:]


def update_file(path: Path, block: str) -> None:
    """Rewrite the generated block of the Markdown file at ``path`` in place."""
    text = path.read_text(encoding="utf-8")
    updated = replace_block(text, block, str(path))
    temporary = path.with_name(f".{path.name}.bench-tmp")
    temporary.write_text(updated, encoding="utf-8")
    temporary.replace(path)


def provenance(command: str, scale: Scale, skipped: Sequence[str] = ()) -> str:
    """The line under a generated table: which command, when, on what, at which scale."""
    line = f"Generated by `{command}` on {today()} ({machine()})"
    if scale == "quick":
        line += "; a `--quick` run: fewer iterations and smaller corpora, so noisier figures"
    elif scale == "smoke":
        line += "; a `--smoke` run: it only shows the command works, the figures mean nothing"
    if skipped:
        line += f"; skipped: {', '.join(skipped)}"
    return line + "."
