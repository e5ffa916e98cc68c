"""From plain bm25s to rcpkit's sparse arm, one difference at a time (issue 50).

    PYTHONPATH=src python benchmarks/lexical_trace.py COLLECTION INDEX

COLLECTION is a BEIR-layout folder, INDEX an rcpkit index of it (the quality
lab's ``NAME-judged/index``, or ``lexical_parity.py``'s sparse one): its chunks
are the last step's units. BM25 is computed in numpy with every choice a
parameter; the first line is the bm25s library itself (``rcpkit.evaluation.
baseline``), the second the numpy BM25 with bm25s's choices (it must equal the
first), and each line after adds one of rcpkit's choices to the line above. The
seventh line should equal ``lexical_parity.py``'s sparse figure (rcpkit's query
weights are the engine's ``query_weights``: a repeat ``1 + ln c``, an identifier's
parts ``1 / n`` each). Then one change on top of it: Lucene's idf (FTS5's gives a
term in over half the rows ~0: "file" in man-long). Then the analyser step split
into its parts, on whole documents. Printed: nDCG@10 per half; ``--losses`` also
prints the dev queries the seventh line ranks below bm25s, with both term lists.
"""

from __future__ import annotations

import argparse
import math
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN
from scipy import sparse

from rcpkit.engine.scoring.bm25 import query_weights, tokens
from rcpkit.engine.text import analysis
from rcpkit.evaluation.baseline import bm25_baseline
from rcpkit.evaluation.dataset import Dataset, load_dataset
from rcpkit.evaluation.metrics import Run, score_run
from rcpkit.evaluation.split import split_queries

Unit = tuple[str, list[str], list[str]]  # document id, title terms, body terms
Weighted = dict[str, float]  # a query's distinct tokens and their weights (query_weights)
_STEM = Stemmer.Stemmer("english")
_CUT = 64  # the engine reads a query's first 64 analysed terms (recall.cut_terms)


def bm25(
    units: Sequence[Unit],
    queries: dict[str, list[str]] | dict[str, Weighted],
    k1: float,
    b: float,
    title_weight: float = 1.0,
    idf: str = "lucene",
    weight: Callable[[int], float] = lambda c: 1.0 + math.log(c),
) -> Run:
    """Each query's top 100 documents, a document scored by its best unit."""
    vocabulary: dict[str, int] = {}
    rows, cols, counts, lengths = [], [], [], []
    for row, (_, title, body) in enumerate(units):
        weighted: Counter[str] = Counter()
        for term in title:
            weighted[term] += title_weight
        for term in body:
            weighted[term] += 1
        lengths.append(len(title) + len(body))
        for term, f in weighted.items():
            rows.append(row)
            cols.append(vocabulary.setdefault(term, len(vocabulary)))
            counts.append(f)
    n_units, length = len(units), np.asarray(lengths, dtype=float)
    df = np.bincount(cols, minlength=len(vocabulary)).astype(float)
    ratio = (n_units - df + 0.5) / (df + 0.5)
    idfs = np.log1p(ratio) if idf == "lucene" else np.maximum(np.log(ratio), 1e-6)  # FTS5's
    r, c, f = np.asarray(rows), np.asarray(cols), np.asarray(counts, dtype=float)
    part = idfs[c] * f * (k1 + 1) / (f + k1 * (1 - b + b * length[r] / length.mean()))
    by_term = sparse.csr_matrix((part, (c, r)), shape=(len(vocabulary), n_units))
    names, document_of = np.unique([unit[0] for unit in units], return_inverse=True)
    run: Run = {}
    for query_id, terms in queries.items():
        given = (
            terms if isinstance(terms, dict) else {t: weight(c) for t, c in Counter(terms).items()}
        )
        held = {term: w for term, w in given.items() if term in vocabulary}
        if not held:
            run[query_id] = {}
            continue
        weights = np.asarray(list(held.values()))
        scores = np.asarray(by_term[[vocabulary[t] for t in held]].T @ weights).ravel()
        best = np.full(len(names), -np.inf)
        np.maximum.at(best, document_of, scores)
        top = np.argsort(-best, kind="stable")[:100]
        run[query_id] = {str(names[i]): float(best[i]) for i in top if best[i] > 0}
    return run


def bm25s_terms(texts: list[str]) -> list[list[str]]:
    found: list[list[str]] = bm25s.tokenize(
        texts, stopwords="en", stemmer=_STEM, show_progress=False, return_ids=False
    )
    return found


def rcpkit_terms(texts: list[str], query: bool = False) -> list[list[str]]:
    """The terms the index holds (FTS5's tokens of the analysed text)."""
    analyse = analysis.analyze_query if query else analysis.analyze
    return [tokens(" ".join(analyse(text))) for text in texts]


def parted_terms(texts: list[str], stop: frozenset[str], shortest: int) -> list[list[str]]:
    """rcpkit's tokeniser with another stop list and a shortest term."""
    out = []
    for text in texts:
        words = re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold())
        words = [part for word in words for part in word.split("_") if part]
        out.append(_STEM.stemWords([w for w in words if w not in stop and len(w) >= shortest]))
    return out


def chunk_units(index: Path) -> list[Unit]:
    db = sqlite3.connect(f"file:{index / 'index.sqlite3'}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT c.doc_id, f.title, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.key"
        " WHERE c.removed IS NULL ORDER BY c.key"
    ).fetchall()
    return [(doc, tokens(title or ""), tokens(body or "")) for doc, title, body in rows]


def halves(dataset: Dataset, run: Run) -> str:
    got = []
    for half in ("dev", "heldout"):
        ids = split_queries(dataset.queries, half)
        qrels = {q: dataset.qrels[q] for q in ids if q in dataset.qrels}
        scored = score_run(qrels, {q: run.get(q, {}) for q in qrels}, ("nDCG@10",))
        got.append(f"{half} {scored.aggregate['nDCG@10']:.4f}")
    return "  ".join(got)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("collection", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("--losses", action="store_true", help="the dev queries lost to bm25s")
    args = parser.parse_args()
    dataset = load_dataset(args.collection)
    documents = [d for d in dataset.corpus if not d.empty]
    ids = [d.id for d in documents]
    joined = [f"{d.title} {d.text}" for d in documents]  # as bm25s is given them
    judged = [f"{d.title}\n{d.text}" if d.title else d.text for d in documents]  # as rcpkit
    asked = list(dataset.queries.values())

    def queries(terms: list[list[str]]) -> dict[str, list[str]]:
        return dict(zip(dataset.queries, terms, strict=True))

    def whole(terms: list[list[str]]) -> list[Unit]:
        return [(i, [], t) for i, t in zip(ids, terms, strict=True)]

    plain, ours = whole(bm25s_terms(joined)), whole(rcpkit_terms(judged))
    # As recall weighs them (Parts kept: not re-tokenised), cut at 64 terms.
    ours_q = {
        q: query_weights(analysis.analyze_query(t)[:_CUT]) for q, t in dataset.queries.items()
    }
    chunks = chunk_units(args.index)
    steps: list[tuple[str, Callable[[], Run]]] = [
        ("bm25s library", lambda: bm25_baseline(dataset, 100)),
        (
            "numpy, bm25s's choices",
            lambda: bm25(plain, queries(bm25s_terms(asked)), 0.9, 0.4, weight=float),
        ),
        ("+ query weight 1 + ln c", lambda: bm25(plain, queries(bm25s_terms(asked)), 0.9, 0.4)),
        ("+ rcpkit's analyser", lambda: bm25(ours, ours_q, 0.9, 0.4)),
        ("+ b 0.6", lambda: bm25(ours, ours_q, 0.9, 0.6)),
        ("+ FTS5's idf", lambda: bm25(ours, ours_q, 0.9, 0.6, idf="fts5")),
        ("+ rcpkit's chunks, best, title x3", lambda: bm25(chunks, ours_q, 0.9, 0.6, 3.0, "fts5")),
        ("  then: Lucene's idf", lambda: bm25(chunks, ours_q, 0.9, 0.6, 3.0)),
    ]
    theirs, rcpkit_stop = frozenset(STOPWORDS_EN), analysis._STOPWORDS
    for stop_name, stop in (("bm25s's", theirs), ("rcpkit's", rcpkit_stop)):
        for shortest in (2, 1):
            label = f"  analyser: {stop_name} stop words, terms >= {shortest} characters"
            split = whole(parted_terms(judged, stop, shortest))
            run = queries(parted_terms(asked, stop, shortest))
            steps.append((label, lambda u=split, q=run: bm25(u, q, 0.9, 0.4)))
    steps.append(
        ("  analyser: + a query's identifiers as code", lambda: bm25(ours, ours_q, 0.9, 0.4))
    )
    for label, make in steps:
        print(f"{label:<62} {halves(dataset, make())}", flush=True)
    if args.losses:
        theirs = dict(zip(dataset.queries, bm25s_terms(asked), strict=True))
        mine = {q: list(weights) for q, weights in ours_q.items()}
        losses(dataset, steps[0][1](), steps[6][1](), theirs, mine)


def losses(
    dataset: Dataset, base: Run, ours: Run, theirs: dict[str, list[str]], mine: dict[str, list[str]]
) -> None:
    """The dev queries ``ours`` ranks below ``base``: nDCG@10 lost, each side's first hit, terms."""
    ids = split_queries(dataset.queries, "dev")
    qrels = {q: dataset.qrels[q] for q in ids if q in dataset.qrels}
    before, after = (score_run(qrels, run, ("nDCG@10",)).per_query for run in (base, ours))
    lost = sorted((after[q]["nDCG@10"] - before[q]["nDCG@10"], q) for q in qrels)
    for delta, q in (row for row in lost if row[0] < 0):
        first = [max(run.get(q, {"-": 0.0}).items(), key=lambda i: i[1])[0] for run in (base, ours)]
        print(f"{delta:+.3f} {q}: bm25s {first[0]} {theirs[q]} | rcpkit {first[1]} {mine[q]}")


if __name__ == "__main__":
    main()
