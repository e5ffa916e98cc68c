"""A known-item test collection generated from the docstrings of installed scientific packages.

    rcpkit collections OUT --only docstrings [--packages numpy,scipy]

Where it comes from: the NumPy-style docstrings of the public functions and
classes of NumPy and SciPy (both installed with rcpkit; nothing is
downloaded). Each docstring's one-line summary becomes a query; the rest of
its prose (the extended summary and the Notes, without the Parameters,
Returns and Examples sections) becomes the one relevant document, titled with
the object's dotted name. The query is a natural-language description of
computing functionality; the document explains the same functionality in
other words, so the collection measures paraphrase as well as term matching.

Kept: a summary of at least 5 words, a body of at least 25 words; a summary
or body seen twice (aliases, re-exports) keeps its first object only, so no
query has two right answers. The order is sorted by dotted name: the output
is the same for the same package versions (they are written into
``README.txt``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["DEFAULT_PACKAGES", "collect", "write_collection"]

DEFAULT_PACKAGES = (
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.polynomial", "numpy.ma",
    "scipy.linalg", "scipy.stats", "scipy.signal", "scipy.optimize", "scipy.integrate",
    "scipy.interpolate", "scipy.sparse", "scipy.sparse.linalg", "scipy.sparse.csgraph",
    "scipy.special", "scipy.spatial", "scipy.ndimage", "scipy.fft", "scipy.cluster.hierarchy",
    "scipy.cluster.vq", "scipy.io", "scipy.odr", "scipy.constants",
)  # fmt: skip
_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}\s*$", re.MULTILINE)
_SIGNATURE = re.compile(r"^[\w.]+\(.*\)$")
_BOILERPLATE = ("**Array API", ".. ", "As an instance of the ")
_PROSE_SECTIONS = {"Notes", "Extended Summary"}
_MIN_QUERY_WORDS, _MIN_BODY_WORDS, _MAX_BODY_WORDS = 5, 25, 400


def _objects(module_name: str) -> Iterator[tuple[str, object]]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(names):
        value = getattr(module, name, None)
        if inspect.isfunction(value) or inspect.isclass(value) or callable(value):
            yield f"{module_name}.{name}", value


def _split(doc: str) -> tuple[str, str] | None:
    """(summary, prose body) of a NumPy-style docstring, or None."""
    parts = _SECTION.split(doc)
    head, sections = parts[0], dict(zip(parts[1::2], parts[2::2], strict=False))
    paragraphs = [p.strip() for p in head.strip().split("\n\n") if p.strip()]
    while paragraphs and _SIGNATURE.match(" ".join(paragraphs[0].split())):
        paragraphs = paragraphs[1:]  # a ufunc's docstring opens with its call signature
    if not paragraphs:
        return None
    summary = " ".join(paragraphs[0].split())
    prose = paragraphs[1:]
    for section in (s for s in sections if s in _PROSE_SECTIONS):
        prose += [p.strip() for p in sections[section].split("\n\n")]
    # Boilerplate shared by many objects (array-API notes, reST directives) is not prose.
    prose = [p for p in prose if p and not p.startswith(_BOILERPLATE)]
    body = " ".join(" ".join(prose).split())
    body = re.sub(r"\.\. \w+::[^.]*", "", body)  # reST directives are not prose
    return summary, body


def collect(packages: tuple[str, ...] = DEFAULT_PACKAGES) -> list[tuple[str, str, str]]:
    """(dotted name, query, document body) per kept object, sorted by name."""
    found: dict[str, tuple[str, str]] = {}
    for package in packages:
        for name, value in _objects(package):
            doc = inspect.getdoc(value)
            parsed = _split(doc) if doc else None
            if parsed is not None:
                found.setdefault(name, parsed)
    kept: list[tuple[str, str, str]] = []
    summaries: set[str] = set()
    bodies: set[str] = set()
    for name in sorted(found):
        summary, body = found[name]
        words = len(body.split())
        if len(summary.split()) < _MIN_QUERY_WORDS or words < _MIN_BODY_WORDS:
            continue
        if summary.casefold() in summaries or body in bodies:
            continue
        summaries.add(summary.casefold())
        bodies.add(body)
        kept.append((name, summary, " ".join(body.split()[:_MAX_BODY_WORDS])))
    return kept


def write_collection(out: Path, packages: tuple[str, ...] = DEFAULT_PACKAGES) -> int:
    """Write a BEIR-layout collection to ``out``; returns the number of queries."""
    items = collect(packages)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus, \
         (out / "queries.jsonl").open("w", encoding="utf-8") as queries, \
         (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels:  # fmt: skip
        qrels.write("query-id\tcorpus-id\tscore\n")
        for number, (name, summary, body) in enumerate(items, 1):
            doc_id, query_id = f"d{number}", f"q{number}"
            corpus.write(json.dumps({"_id": doc_id, "title": name, "text": body}) + "\n")
            queries.write(json.dumps({"_id": query_id, "text": summary}) + "\n")
            qrels.write(f"{query_id}\t{doc_id}\t1\n")
    versions = []
    for package in sorted({p.split(".")[0] for p in packages}):
        versions.append(f"{package} {importlib.import_module(package).__version__}")
    (out / "README.txt").write_text(
        "Generated by `rcpkit collections --only docstrings` from the docstrings of "
        f"{', '.join(versions)}: {len(items)} queries (a docstring's summary line), "
        "one relevant document each (the rest of its prose).\n",
        encoding="utf-8",
    )
    return len(items)
