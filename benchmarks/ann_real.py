"""HNSW against exact search on real-text MiniLM vectors, and rcpkit's choice (issue 31).

    .venv/bin/python benchmarks/ann_real.py embed [--chunks 220000]   # hours on 2 cores; cached
    .venv/bin/python benchmarks/ann_real.py measure [--queries 200] [--json FILE]

The source is text installed on this machine, nothing downloaded: every docstring
paragraph (at least 40 characters, whitespace folded, deduplicated) of the Python
files under this interpreter's standard library and under the site-packages of
the environment running the script (rcpkit's dev venv: `make .venv/.installed`),
then every Debian package's one-line description from `apt-cache dumpavail`
("name: description"; the lists of the configured apt sources). Files are read in
sorted order, so the corpus is a function of what is installed. The first
`--queries` paragraphs of a seeded shuffle are held out as queries (never indexed);
the rest, up to `--chunks`, are the corpus.

Vectors come from rcpkit's default embedder (bundled all-MiniLM-L6-v2, int8 ONNX)
and are cached as .npy under $RCPKIT_BENCH_CACHE (default ~/.cache/rcpkit-bench),
keyed by a hash of the texts and the model's identity; `embed` writes shards as it
goes and resumes after an interruption. `measure` builds usearch HNSW graphs the
way rcpkit's store does and prints recall@10 / p50 latency over ef against exact
float search, then opens a real rcpkit store over the same vectors and reports
what its calibration chose (exact or ANN, the ef) with the recall it serves.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

CACHE = Path(os.environ.get("RCPKIT_BENCH_CACHE", Path.home() / ".cache" / "rcpkit-bench"))
_SHARD = 4096
_SKIP_PARTS = {"__pycache__"}


def _docstring_paragraphs(root: Path, seen: set[str], out: list[str]) -> None:
    for path in sorted(root.rglob("*.py")):
        if _SKIP_PARTS & set(path.parts):
            continue
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError, OSError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not isinstance(
                node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
            ):
                continue
            docstring = ast.get_docstring(node)
            for paragraph in (docstring or "").split("\n\n"):
                text = " ".join(paragraph.split())
                if len(text) >= 40 and text not in seen:
                    seen.add(text)
                    out.append(text)


def _debian_descriptions(seen: set[str], out: list[str]) -> None:
    try:
        dump = subprocess.run(
            ["apt-cache", "dumpavail"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return
    name = ""
    for line in dump.splitlines():
        if line.startswith("Package: "):
            name = line[9:].strip()
        elif line.startswith("Description: "):
            text = f"{name}: {line[13:].strip()}"
            if text not in seen:
                seen.add(text)
                out.append(text)


def corpus_texts() -> list[str]:
    """Every paragraph of the source, in a fixed order (see the module docstring)."""
    seen: set[str] = set()
    texts: list[str] = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    _docstring_paragraphs(stdlib, seen, texts)
    purelib = Path(sysconfig.get_paths()["purelib"])
    if not purelib.is_relative_to(stdlib):
        _docstring_paragraphs(purelib, seen, texts)
    _debian_descriptions(seen, texts)
    return texts


def split(texts: list[str], chunks: int, queries: int) -> tuple[list[str], list[str]]:
    """(corpus, held-out queries): a seeded shuffle, queries first."""
    order = list(range(len(texts)))
    random.Random(31).shuffle(order)
    held = [texts[i] for i in order[:queries]]
    corpus = [texts[i] for i in order[queries : queries + chunks]]
    return corpus, held


def _key(texts: list[str], identity: str) -> str:
    digest = hashlib.sha256(identity.encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _folder(texts: list[str], identity: str) -> Path:
    return CACHE / f"ann-real-{_key(texts, identity)}"


def embed_cached(texts: list[str], embedder: Any, log: bool = True) -> npt.NDArray[np.float32]:
    """MiniLM vectors of `texts`, from the cache or embedded (by shards, resumable)."""
    folder = _folder(texts, embedder.identity)
    final = folder / "vectors.npy"
    if final.exists():
        return np.load(final)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "source.json").write_text(
        json.dumps({"model": embedder.identity, "texts": len(texts), "source": __doc__[:200]})
    )
    started = time.perf_counter()
    done = 0
    shards = []
    for first in range(0, len(texts), _SHARD):
        shard = folder / f"shard-{first:08d}.npy"
        part = texts[first : first + _SHARD]
        if not shard.exists():
            # Sorting by length keeps each batch's padding small; the order is undone after.
            order = sorted(range(len(part)), key=lambda i: len(part[i]))
            vectors = embedder.embed([part[i] for i in order], "document")
            unsorted = np.empty_like(vectors)
            unsorted[np.asarray(order)] = vectors
            np.save(shard.with_suffix(".tmp.npy"), unsorted.astype(np.float32))
            os.replace(shard.with_suffix(".tmp.npy"), shard)
            done += len(part)
            if log:
                rate = done / (time.perf_counter() - started)
                left = (len(texts) - first - len(part)) / max(rate, 1e-9)
                print(
                    f"{first + len(part):,}/{len(texts):,} embedded, {rate:.0f}/s, "
                    f"~{left / 60:.0f} min left",
                    flush=True,
                )
        shards.append(shard)
    matrix = np.concatenate([np.load(s) for s in shards]).astype(np.float32)
    np.save(folder / "vectors.tmp.npy", matrix)
    os.replace(folder / "vectors.tmp.npy", final)
    for shard in shards:
        shard.unlink()
    return matrix


def _embed(args: argparse.Namespace) -> None:
    from rcpkit.engine.models import load_embedder

    started = time.perf_counter()
    texts = corpus_texts()
    corpus, held = split(texts, args.chunks, args.queries)
    print(
        f"{len(texts):,} paragraphs read in {time.perf_counter() - started:.0f} s; "
        f"corpus {len(corpus):,}, queries {len(held):,}",
        flush=True,
    )
    embedder = load_embedder(None, threads=args.threads, batch_size=32)
    embed_cached(held, embedder)
    embed_cached(corpus, embedder)
    print(f"done in {(time.perf_counter() - started) / 60:.0f} min", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    embed = commands.add_parser("embed")
    measure = commands.add_parser("measure")
    for command in (embed, measure):
        command.add_argument("--chunks", type=int, default=220_000)
        command.add_argument("--queries", type=int, default=200)
        command.add_argument("--threads", type=int, default=2)
    measure.add_argument("--json", type=Path)
    measure.add_argument("--folder", type=Path, default=Path("/tmp/rcpkit-ann-real"))
    args = parser.parse_args()
    if args.command == "embed":
        _embed(args)
    else:
        _measure(args)


def _cached(texts: list[str], identity: str) -> npt.NDArray[np.float32]:
    final = _folder(texts, identity) / "vectors.npy"
    if not final.exists():
        raise SystemExit(f"no cached vectors at {final}: run `{Path(__file__).name} embed` first")
    return np.load(final)


def _p50_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def _curve(
    graph: Any, matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]
) -> tuple[list[dict[str, float]], float]:
    """recall@10 and p50 per ef on ``queries``, and the exact path's p50 in the same rounds."""
    from rcpkit.engine.index._ann import tie_aware_recall

    truths = [matrix @ q for q in queries]
    exact_times: list[float] = []
    rows = []
    for ef in (16, 32, 64, 128, 256, 512, 1024):
        graph.expansion_search = ef
        recalls, times = [], []
        for query, truth in zip(queries, truths, strict=True):
            started = time.perf_counter()
            matches = graph.search(query, 10, threads=1)
            times.append(time.perf_counter() - started)
            started = time.perf_counter()
            scores = matrix @ query
            np.argpartition(scores, len(scores) - 10)[-10:]
            exact_times.append(time.perf_counter() - started)
            found = np.asarray(matches.keys, dtype=np.int64) - 1  # keys are positions + 1
            recalls.append(tie_aware_recall(found, truth))
        rows.append({"ef": ef, "recall": float(np.mean(recalls)), "p50_ms": _p50_ms(times)})
    return rows, _p50_ms(exact_times)


def _measure(args: argparse.Namespace) -> None:
    """The HNSW curve on held-out queries, then what rcpkit's own calibration decides."""
    from rcpkit.engine.index.dense import DenseIndex, DensePolicy
    from rcpkit.engine.models import load_embedder

    identity = load_embedder(None, threads=1).identity
    corpus, held = split(corpus_texts(), args.chunks, args.queries)
    matrix, queries = _cached(corpus, identity), _cached(held, identity)
    rows = len(matrix)
    print(f"{rows:,} chunks x {matrix.shape[1]} dims, {len(queries)} held-out queries", flush=True)
    # rcpkit's dense index as the engine holds it, with the ANN threshold lowered to
    # this corpus's size (the default, 250,000 rows, would keep it exact regardless).
    policy = DensePolicy(ann_min_size=min(rows, DensePolicy().ann_min_size))
    args.folder.mkdir(parents=True, exist_ok=True)
    index = DenseIndex(matrix.shape[1], policy, graph_path=args.folder / "dense.usearch")
    keys = np.arange(1, rows + 1, dtype=np.int64)
    started = time.perf_counter()
    index.extend(keys, matrix, np.ones(rows, np.int64), np.zeros(rows, np.int64), [""] * rows)
    index.wait_for_graph(3600)
    build_s = time.perf_counter() - started
    print(f"HNSW built (or loaded) in {build_s:.0f} s", flush=True)
    calibration_queries, curve_queries = queries[:32], queries[32:]
    graph = index.ann_graph
    curve, exact_p50 = _curve(graph, matrix, curve_queries)
    for row in curve:
        print(
            f"ef {row['ef']:>5}: recall@10 {row['recall']:.3f}, p50 {row['p50_ms']:.2f} ms "
            f"({row['p50_ms'] / exact_p50:.2f}x exact {exact_p50:.2f} ms)",
            flush=True,
        )
    # The engine's own decision: the queries it received trigger the calibration.
    for query in calibration_queries:
        index.search(query, 10)
    index.wait_for_ann(3600)
    decision: Any = index.ann_calibration
    served = [index.search(q, 10) for q in curve_queries]
    truths = [matrix @ q for q in curve_queries]
    from rcpkit.engine.index._ann import tie_aware_recall

    recall = float(
        np.mean(
            [
                tie_aware_recall(np.asarray([key - 1 for key, _ in hits], np.int64), truth)
                for hits, truth in zip(served, truths, strict=True)
            ]
        )
    )
    chosen = "exact" if decision is None or not decision.use_ann else f"ANN at ef {decision.ef}"
    print(f"rcpkit's calibration chose {chosen}; served recall@10 {recall:.3f}", flush=True)
    if decision is not None:
        print(
            f"  calibration: recall {decision.recall:.3f} at {decision.ann_ms:.2f} ms "
            f"vs exact {decision.exact_ms:.2f} ms; curve {list(decision.curve)}",
            flush=True,
        )
    if args.json:
        record = {
            "rows": rows,
            "queries": len(curve_queries),
            "build_s": build_s,
            "exact_p50_ms": exact_p50,
            "curve": curve,
            "decision": None if decision is None else decision.to_json(),
            "served_recall": recall,
        }
        args.json.write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    sys.exit(main())
