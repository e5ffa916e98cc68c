"""OCR benchmark (issue 19): Cranfield rendered to page images, indexed from the images only.

Each document (title, blank line, text) is rendered here with Pillow's bundled
font at 24 px on one of a few page widths, wrapped to fit; nothing is stored. The
images go through the same OCR as ``rcpkit index`` (`rcpkit.engine.ingest._ocr`),
and the recognised text is indexed through ``index/add`` in one engine while the
original text goes into another, both with the same settings; Cranfield's queries
then run through ``rcpkit eval``'s harness on both. Reported: OCR pages/s, the
character error rate (edit distance / reference length, whitespace collapsed) and
nDCG@10 of the OCR index against the text one (issue 19 asks ≥ 0.9×).

``--docs N`` keeps the first N documents and only the queries judged relevant to
one of them (a subset, for a small machine). Pages are OCR'd by ``--workers``
processes (default min(cpu, 2)), one onnxruntime thread each, as ``rcpkit index``'s
OCR pool does; pages/s is wall-clock over the pages read in this run.

``--cache FILE`` keeps each page's recognised text (one JSON line per page: id,
page width, text) as it is read, so a full run (1,398 pages, about an hour on two
cores) can be stopped and resumed; pages found there are not read again and do not
count towards pages/s.

    .venv/bin/python benchmarks/ocr_cranfield.py [--docs 200] [--stages lexical] [--workers 2]
        [--cache ocr-pages.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import multiprocessing
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rcpkit.client import connect_in_memory
from rcpkit.engine.config import load_config
from rcpkit.engine.ingest._ocr import recognize, set_threads
from rcpkit.engine.ingest.ocr_pool import default_workers
from rcpkit.engine.open import open_engine
from rcpkit.evaluation.dataset import CorpusDocument, Dataset, load_dataset
from rcpkit.evaluation.harness import evaluate
from rcpkit.evaluation.metrics import PRIMARY
from rcpkit.evaluation.report import render_table
from rcpkit.handlers.engine import build_engine_app

CRANFIELD = Path("/work/shared/datasets/cranfield")
_WIDTHS = (1000, 1240, 1600)  # a few page sizes (pixels at 24 px type)
_FONT_PX = 24


def render(document: CorpusDocument, width: int) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=_FONT_PX)
    columns = max(20, int((width - 80) / (_FONT_PX * 0.55)))
    lines = [*textwrap.wrap(document.title, columns), ""]
    lines += textwrap.wrap(" ".join(document.text.split()), columns)
    height = 80 + len(lines) * int(_FONT_PX * 1.5)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((40, 40 + number * int(_FONT_PX * 1.5)), line, fill=0, font=font)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def read_page(document: CorpusDocument, width: int) -> str:
    """Render one document and OCR it (runs in a worker process)."""
    return "\n".join(line for line, _ in recognize(render(document, width)))


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, exact, in O(len · d): the DP is kept to a band of
    half-width ``band`` around the diagonal and the band doubled until the
    distance found fits inside it (a path leaving the band costs more than it)."""
    band = max(16, abs(len(a) - len(b)))
    while True:
        found = _banded(a, b, band)
        if found <= band:
            return found
        band *= 2


def _banded(a: str, b: str, band: int) -> int:
    far = len(a) + len(b) + 1
    previous = [j if j <= band else far for j in range(len(b) + 1)]
    for i, char in enumerate(a, 1):
        low, high = max(1, i - band), min(len(b), i + band)
        current = [far] * (len(b) + 1)
        current[0] = i if i <= band else far
        for j in range(low, high + 1):
            current[j] = min(
                previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != b[j - 1])
            )
        previous = current
    return previous[-1]


def read_cache(path: Path | None) -> dict[tuple[str, int], str]:
    """Texts already read, by (document id, page width); a torn last line is ignored."""
    if path is None or not path.exists():
        return {}
    found: dict[tuple[str, int], str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            found[(row["id"], int(row["width"]))] = row["text"]
        except (ValueError, KeyError, TypeError):
            continue
    return found


def read_pages(
    documents: list[CorpusDocument], widths: list[int], workers: int, cache: Path | None
) -> tuple[list[str], int, float]:
    """Every page's OCR text, the number read in this run, and the seconds it took."""
    known = read_cache(cache)
    todo = [n for n, d in enumerate(documents) if (d.id, widths[n]) not in known]
    started = time.perf_counter()
    sink = cache.open("a", encoding="utf-8") if cache is not None else None
    try:
        with ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=set_threads,
            initargs=(1,),
        ) as pool:
            pages = [documents[n] for n in todo]
            for done, (n, text) in enumerate(
                zip(todo, pool.map(read_page, pages, [widths[n] for n in todo]), strict=True), 1
            ):
                known[(documents[n].id, widths[n])] = text
                if sink is not None:
                    row = {"id": documents[n].id, "width": widths[n], "text": text}
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                if done % 25 == 0:  # a run cut short still says how fast it went
                    elapsed = time.perf_counter() - started
                    progress = f"  {done}/{len(todo)} pages in {elapsed:.0f} s"
                    print(progress, file=sys.stderr, flush=True)
    finally:
        if sink is not None:
            sink.close()
    seconds = time.perf_counter() - started
    return [known[(d.id, widths[n])] for n, d in enumerate(documents)], len(todo), seconds


def subset(dataset: Dataset, docs: int | None) -> Dataset:
    corpus = [d for d in dataset.corpus if not d.empty][:docs]
    kept = {d.id for d in corpus}
    qrels = {
        q: {d: g for d, g in judged.items() if d in kept}
        for q, judged in dataset.qrels.items()
        if any(d in kept and g > 0 for d, g in judged.items())
    }
    queries = {q: text for q, text in dataset.queries.items() if q in qrels}
    return Dataset(dataset.name, corpus, queries, qrels)


async def _run(dataset: Dataset, stages: list[str], embedder: str | None) -> Any:
    engine = open_engine(
        load_config(None, index=Path(tempfile.mkdtemp(prefix="ocr-bench-")), embedder=embedder)
    )
    try:
        async with await connect_in_memory(build_engine_app(engine).server, timeout=None) as client:
            return await evaluate(client, dataset, stages=stages)
    finally:
        engine.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=None, help="first N documents (a subset)")
    parser.add_argument("--stages", default="lexical", help="comma-separated eval stages")
    parser.add_argument("--embedder", default=None)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--cache", type=Path, default=None, help="JSONL of pages read (resumable)")
    args = parser.parse_args(argv)
    original = subset(load_dataset(CRANFIELD), args.docs)
    read: list[CorpusDocument] = []
    errors = reference = 0
    widths = [_WIDTHS[number % len(_WIDTHS)] for number in range(len(original.corpus))]
    texts, fresh, seconds = read_pages(original.corpus, widths, args.workers, args.cache)
    for document, text in zip(original.corpus, texts, strict=True):
        read.append(CorpusDocument(document.id, "", text, {}))
        truth = " ".join(f"{document.title} {document.text}".split())
        errors += edit_distance(" ".join(text.split()), truth)
        reference += len(truth)
    ocr = Dataset(original.name + "-ocr", read, original.queries, original.qrels)
    stages = args.stages.split(",")
    on_text = asyncio.run(_run(original, stages, args.embedder))
    on_ocr = asyncio.run(_run(ocr, stages, args.embedder))
    if fresh:
        rate = fresh / seconds
        speed = f"{rate:.3f} pages/s"
        print(f"{fresh} pages OCR'd in {seconds:.1f} s by {args.workers} workers: {speed}")
    if fresh < len(read):
        print(f"{len(read) - fresh} pages read from {args.cache} (earlier runs)")
    print(f"character error rate {errors / max(reference, 1):.4f} ({errors} / {reference})")
    print(f"{len(original.queries)} queries judged on these documents")
    print("original text:\n" + render_table(on_text))
    print("OCR text only:\n" + render_table(on_ocr))
    for stage_text, stage_ocr in zip(on_text.rows, on_ocr.rows, strict=True):
        a, b = stage_text.scores[PRIMARY], stage_ocr.scores[PRIMARY]
        print(f"{stage_text.label}: nDCG@10 OCR / text = {b:.4f} / {a:.4f} = {b / a:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
