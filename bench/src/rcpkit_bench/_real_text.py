"""Real text chunks for the scale benchmarks, from what is installed on this machine.

The shared Cranfield abstracts cut into 60-word passages (as
``benchmarks/library_peers.py`` cuts them), then the prose of the triple-quoted
strings (docstrings, mostly) of this Python's standard library and of the
installed packages, paragraphs of 20 words or more cut the same way; each text
once. About 110,000 chunks on the development machine; nothing is downloaded.
A regular expression finds the strings (parsing every module took minutes).
"""

from __future__ import annotations

import json
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from rcpkit.evaluation.collections import SHARED_CRANFIELD
from rcpkit_bench.report import BenchUnavailable

__all__ = ["WINDOW", "chunks", "queries"]

WINDOW = 60  # words a passage
_SHORTEST = 20
_STRINGS = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.DOTALL)


def chunks(count: int, cranfield: Path = SHARED_CRANFIELD) -> list[str]:
    """The first ``count`` distinct passages; BenchUnavailable when there are fewer here."""
    found: dict[str, None] = {}
    for text in _passages(cranfield):
        found.setdefault(text)
        if len(found) == count:
            return list(found)
    raise BenchUnavailable(f"only {len(found):,} real-text chunks on this machine, not {count:,}")


def queries(count: int, cranfield: Path = SHARED_CRANFIELD) -> list[str]:
    """Cranfield's natural-language queries (the first ``count``), else passages' openings."""
    path = cranfield / "queries.jsonl"
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            asked = [str(json.loads(line)["text"]) for line in lines]
    else:
        asked = [" ".join(text.split()[:8]) for text in chunks(count * 50)[::50]]
    return asked[:count]


def _passages(cranfield: Path) -> Iterator[str]:
    corpus = cranfield / "corpus.jsonl"
    if corpus.exists():
        with corpus.open(encoding="utf-8") as lines:
            for line in lines:
                yield from _windows(str(json.loads(line)["text"]))
    paths = sysconfig.get_paths()
    for root in dict.fromkeys((paths["stdlib"], paths["purelib"])):
        for module in sorted(Path(root).rglob("*.py")):
            try:
                source = module.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for found in _STRINGS.finditer(source):
                for paragraph in (found.group(1) or found.group(2) or "").split("\n\n"):
                    yield from _windows(paragraph)


def _windows(text: str) -> Iterator[str]:
    words = text.split()
    for start in range(0, len(words), WINDOW):
        window = words[start : start + WINDOW]
        if len(window) >= _SHORTEST:
            yield " ".join(window)
