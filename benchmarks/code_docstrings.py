"""Docstring-to-code retrieval over the Python standard library of this interpreter (issue 19).

Every function or method of the stdlib with a docstring whose first sentence is
distinctive (at least four words, said of no other function) gives one query: that
sentence. The indexed document is the function's source with its docstring cut out,
so nothing of the query text is in the target verbatim. Documents go in through
``index/add`` as ``modality: "code"`` (tree-sitter chunks, identifier-aware terms),
then ``rcpkit eval``'s harness runs lexical, dense and hybrid and the bm25s baseline
on the same documents.

    .venv/bin/python benchmarks/code_docstrings.py [--queries 1200] [--distractors N]
        [--index DIR] [--modality code|text] [--modules asyncio,email,...] [--json FILE]

Every definition of the modules chosen (functions, methods, classes; with or
without a docstring) is indexed: the targets and everything else as distractors.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import random
import re
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rcpkit.client import connect_in_memory
from rcpkit.engine.config import load_config
from rcpkit.engine.open import open_engine
from rcpkit.evaluation.dataset import CorpusDocument, Dataset
from rcpkit.evaluation.harness import evaluate
from rcpkit.evaluation.report import render_table
from rcpkit.handlers.engine import build_engine_app

_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)
_SKIP_PARTS = {"test", "tests", "idlelib", "lib2to3", "site-packages", "__pycache__"}


Item = tuple[str, str, str | None, str]  # id, file, first sentence (a target) or None, code


def _functions(root: Path, modules: frozenset[str] | None) -> list[Item]:
    """Every function, method and class of ``modules`` (top-level names; None = all).

    A function or method with a docstring and a body may be a target: its first
    docstring sentence is kept. Everything else is a distractor only. The code is
    the definition's source with the docstring cut out; a class keeps its own lines
    (header, class attributes), not its methods, which are items of their own.
    """
    found: list[Item] = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if _SKIP_PARTS & set(parts):
            continue
        if modules is not None and parts[0].removesuffix(".py") not in modules:
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = source.splitlines(keepends=True)
        relative = path.relative_to(root).as_posix()
        for node, qualname in _walk(tree, ""):
            sentence, code = _item(node, lines)
            if code.strip():
                found.append((f"{relative}:{qualname}", relative, sentence, code))
    return found


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _walk(tree: ast.AST, prefix: str) -> Any:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            yield node, f"{prefix}{node.name}"
            yield from _walk(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, f"{prefix}{node.name}"


def _item(node: Definition, lines: list[str]) -> tuple[str | None, str]:
    docstring = ast.get_docstring(node)
    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
    assert node.end_lineno is not None
    cut: set[int] = set()  # 0-based lines left out: the docstring, a class's methods
    first = node.body[0] if node.body else None
    if docstring and first is not None and first.end_lineno is not None:
        cut |= set(range(first.lineno - 1, first.end_lineno))
    if isinstance(node, ast.ClassDef):
        for child in node.body:
            if isinstance(child, Definition) and child.end_lineno is not None:
                begin = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                cut |= set(range(begin - 1, child.end_lineno))
    kept = [
        line
        for number, line in enumerate(lines[start : node.end_lineno], start)
        if number not in cut
    ]
    code = _dedent("".join(kept))
    target = not isinstance(node, ast.ClassDef) and docstring and len(node.body) >= 2
    if not target:
        return None, code
    match = _SENTENCE.match(" ".join(docstring.split()))
    sentence = match.group(1) if match else " ".join(docstring.split())
    return (sentence if len(sentence.split()) >= 4 else None), code


def _dedent(code: str) -> str:
    import textwrap

    return textwrap.dedent(code).rstrip() + "\n"


def build(
    queries: int,
    seed: int,
    distractors: int | None = None,
    modules: frozenset[str] | None = None,
) -> tuple[Dataset, int]:
    """The query set; the corpus is every target plus ``distractors`` other definitions."""
    functions = _functions(Path(sysconfig.get_paths()["stdlib"]), modules)
    counts = Counter(sentence.casefold() for _, _, sentence, _ in functions if sentence)
    distinct = [f for f in functions if f[2] and counts[f[2].casefold()] == 1]
    chosen = random.Random(seed).sample(distinct, min(queries, len(distinct)))
    targets = {item[0] for item in chosen}
    others = [f for f in functions if f[0] not in targets]
    if distractors is not None:
        others = random.Random(seed + 1).sample(others, min(distractors, len(others)))
    corpus = [
        CorpusDocument(id=ident, title=file, text=code, meta={})
        for ident, file, _, code in sorted([*chosen, *others], key=lambda item: item[0])
    ]
    return (
        Dataset(
            name="stdlib-docstrings",
            corpus=corpus,
            queries={ident: sentence for ident, _, sentence, _ in chosen if sentence},
            qrels={ident: {ident: 1} for ident, _, _, _ in chosen},
        ),
        len(functions),
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    modules = frozenset(args.modules.split(",")) if args.modules else None
    dataset, total = build(args.queries, args.seed, args.distractors, modules)
    print(
        f"{total} definitions (functions, methods, classes); {len(dataset.corpus)} indexed,"
        f" {len(dataset.queries)} queries"
    )
    index = Path(args.index or tempfile.mkdtemp(prefix="code-bench-"))
    engine = open_engine(load_config(None, index=index, embedder=args.embedder))
    try:
        async with await connect_in_memory(build_engine_app(engine).server, timeout=None) as client:
            started = time.perf_counter()
            for start in range(0, len(dataset.corpus), 64):
                part = dataset.corpus[start : start + 64]
                documents = [
                    {"id": d.id, "title": d.title, "text": d.text, "modality": args.modality}
                    for d in part
                ]
                await client.index_add(documents, timeout=600.0)
            indexed = time.perf_counter() - started
            print(f"indexed in {indexed:.1f} s")
            evaluation = await evaluate(
                client, dataset, load=False, stages=["lexical", "dense", "hybrid-rrf"]
            )
    finally:
        engine.close()
    table = render_table(evaluation)
    print(table)
    return {
        "functions": total,
        "queries": len(dataset.queries),
        "indexSeconds": indexed,
        "table": table,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", default=None)
    parser.add_argument(
        "--distractors", type=int, default=None, help="non-target functions indexed (default: all)"
    )
    parser.add_argument("--embedder", default=None, help="default: the bundled MiniLM")
    parser.add_argument("--modality", choices=["code", "text"], default="code")
    parser.add_argument(
        "--modules", default=None, help="comma-separated top-level stdlib modules (default: all)"
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
