"""In-process retrieval experiments on a BEIR collection, with every expensive step cached.

    PYTHONPATH=src python benchmarks/quality_lab.py DATASET [--format judged|titled]

Builds an rcpkit index of the collection once (MiniLM, the real chunker and
FTS5), caches the chunk terms, chunk vectors and query vectors in
``/tmp/rcpkit-lab/<name>-<format>/``, then scores pipeline variants in numpy
against the dev / held-out halves of ``rcpkit.evaluation.split``. It is the
research bench for issue 16: methods are chosen on ``dev``; ``heldout`` is read
once a choice is made. ``--format judged`` loads a document the way outside
judges do (the title as the first line of ``text``, ``meta.title`` set, no
``title`` field); ``titled`` the way ``rcpkit eval`` does.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import pickle
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytrec_eval
from scipy import sparse

from rcpkit.engine.config import load_config
from rcpkit.engine.ingest import SourceDocument
from rcpkit.engine.ingest.indexer import _SPARSE_TERMS, content_hash_of, index_documents
from rcpkit.engine.open import open_engine
from rcpkit.engine.retrieve.recall import cut_terms
from rcpkit.engine.scoring.bm25 import query_weights, tokens
from rcpkit.engine.scoring.proximity import pair_bound as bound_of_pairs
from rcpkit.engine.scoring.proximity import pairs_of, positions_of, proximity_scores
from rcpkit.engine.scoring.smoothing import DEPTH, NEIGHBOURS, smooth
from rcpkit.engine.text.analysis import analyze, analyze_code_many, analyze_query
from rcpkit.evaluation.baseline import bm25_baseline
from rcpkit.evaluation.dataset import Dataset, load_dataset
from rcpkit.evaluation.split import split_of

CACHE = Path(os.environ.get("LAB_CACHE", "/tmp/rcpkit-lab"))


def source_documents(dataset: Dataset, layout: str) -> list[SourceDocument]:
    out = []
    for d in dataset.corpus:
        if d.empty:
            continue
        if layout in ("judged", "judged-title"):
            text = f"{d.title}\n{d.text}" if d.title else d.text
            meta = {**d.meta, "title": d.title} if d.title else dict(d.meta)
            # judged-title: what index/add makes of it once meta.title stands in for title
            title = d.title or None if layout == "judged-title" else None
        else:
            text, meta, title = d.text, dict(d.meta), d.title or None
        out.append(SourceDocument(id=d.id, text=text or title or "", title=title, uri="",
                                  modality="text", meta=meta, pages=None,
                                  content_hash=content_hash_of(text, meta, title)))  # fmt: skip
    return out


def chunking() -> dict[str, int]:
    """LAB_CHUNK="TOKENS,OVERLAP": index with other chunk sizes (a cache of their own)."""
    wanted = os.environ.get("LAB_CHUNK")
    if not wanted:
        return {}
    size, overlap = (int(v) for v in wanted.split(","))
    return {"max_chunk_tokens": size, "chunk_overlap_tokens": overlap}


def lab_folder(dataset: Dataset, layout: str) -> Path:
    sizes = chunking()
    suffix = f"-c{sizes['max_chunk_tokens']}-{sizes['chunk_overlap_tokens']}" if sizes else ""
    # LAB_VARIANT: a cache of its own for an index built by a changed engine
    return CACHE / f"{dataset.name}-{layout}{suffix}{os.environ.get('LAB_VARIANT', '')}"


def build(dataset: Dataset, layout: str) -> dict[str, Any]:
    folder = lab_folder(dataset, layout)
    cached = folder / "lab.pickle"
    if cached.exists():
        with cached.open("rb") as handle:
            data: dict[str, Any] = pickle.load(handle)
        return data
    folder.mkdir(parents=True, exist_ok=True)
    engine = open_engine(load_config(None, index=folder / "index", **chunking()))
    documents = source_documents(dataset, layout)
    started = time.perf_counter()
    for start in range(0, len(documents), 64):
        index_documents(engine, documents[start : start + 64])
    print(f"indexed {len(documents)} documents in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)  # fmt: skip
    embed = engine.embedder().embed
    query_ids = list(dataset.queries)
    query_vectors = embed([dataset.queries[q] for q in query_ids], "query")
    db = sqlite3.connect(folder / "index" / "index.sqlite3")
    rows = db.execute(
        "SELECT c.key, c.doc_id, f.title, f.body, c.vector FROM chunks c"
        " JOIN chunks_fts f ON f.rowid = c.key WHERE c.removed IS NULL ORDER BY c.key"
    ).fetchall()
    data = {
        "keys": [r[0] for r in rows],
        "doc_of": [r[1] for r in rows],
        # FTS5's unicode61 splits at "_" too (rcpkit.engine.store.postgres.lexical.tokens).
        "title_terms": [tokens(r[2]) for r in rows],
        "body_terms": [tokens(r[3]) for r in rows],
        "vectors": np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]),
        "query_ids": query_ids,
        "query_vectors": np.asarray(query_vectors, dtype=np.float32),
        # The engine's own lexical arm, to check the numpy BM25 below against.
        "fts": {
            q: engine.store.index.lexical(analyze(dataset.queries[q]), 100) for q in query_ids[:20]
        },
    }
    engine.close()
    with cached.open("wb") as handle:
        pickle.dump(data, handle)
    return data


def splade_scores(dataset: Dataset, layout: str, data: dict[str, Any]) -> np.ndarray:
    """splade-tiny dot products, queries × chunks, as the engine's learned-sparse arm.

    Chunks keep their strongest terms as the indexer does; cached.
    """
    cached = lab_folder(dataset, layout) / "splade.npy"
    if cached.exists():
        return np.load(cached)
    from rcpkit.engine.models import load_splade_tiny

    encoder = load_splade_tiny()
    width = encoder.vocabulary_size
    db = sqlite3.connect(lab_folder(dataset, layout) / "index" / "index.sqlite3")
    texts = dict(db.execute("SELECT key, text FROM chunks WHERE removed IS NULL"))
    started = time.perf_counter()

    def matrix(vectors: list[Any], keep: int | None = _SPARSE_TERMS) -> sparse.csr_matrix:
        rows, cols, vals = [], [], []
        for i, v in enumerate(vectors):
            strongest = np.argsort(-v.values, kind="stable")[:keep]
            rows.extend([i] * len(strongest))
            cols.extend(v.indices[strongest].tolist())
            vals.extend(v.values[strongest].tolist())
        return sparse.csr_matrix((vals, (rows, cols)), shape=(len(vectors), width))

    chunks = matrix(encoder.encode([texts[k] for k in data["keys"]], "document"))
    queries = [dataset.queries[q] for q in data["query_ids"]]
    query_matrix = matrix(encoder.encode(queries, "query"), keep=None)  # the engine keeps all
    print(f"splade-tiny over {len(texts)} chunks in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)  # fmt: skip
    scores = np.asarray((query_matrix @ chunks.T).todense(), dtype=np.float32)
    np.save(cached, scores)
    return scores


class Lexical:
    """FTS5's bm25() (k1 1.2, b 0.75, title column weight 2) in numpy, with query term weights.

    ``title_b`` None: FTS5's way, the title's counts times ``title_weight`` added to
    the body's and one length (title + body) normalised with ``b``. ``title_b``
    given: BM25F (Robertson, Zaragoza & Taylor 2004), each field's counts normalised
    by its own length first (the title's with ``title_b``, the body's with ``b``),
    then weighted (the title by ``title_weight``), summed and saturated once.
    """

    def __init__(self, data: dict[str, Any], title_weight: float = 2.0,
                 k1: float = 1.2, b: float = 0.75,
                 title_b: float | None = None) -> None:  # fmt: skip
        vocabulary: dict[str, int] = {}
        rows, cols, vals = [], [], []
        fields: dict[str, tuple[list[int], list[int], list[float]]] = {
            "title": ([], [], []), "body": ([], [], [])}  # fmt: skip
        lengths, title_lengths, body_lengths = [], [], []
        for i, (title, body) in enumerate(zip(data["title_terms"], data["body_terms"],
                                              strict=True)):  # fmt: skip
            counts: Counter[str] = Counter()
            for t in title:
                counts[t] += title_weight
            for t in body:
                counts[t] += 1.0
            lengths.append(len(title) + len(body))
            title_lengths.append(len(title))
            body_lengths.append(len(body))
            for term, tf in counts.items():
                rows.append(i)
                cols.append(vocabulary.setdefault(term, len(vocabulary)))
                vals.append(tf)
            if title_b is not None:
                for name, words in (("title", title), ("body", body)):
                    r, c, v = fields[name]
                    for term, n_ in Counter(words).items():
                        r.append(i)
                        c.append(vocabulary[term])
                        v.append(float(n_))
        self.vocabulary = vocabulary
        n = len(lengths)
        tf = sparse.csr_matrix((vals, (rows, cols)), shape=(n, len(vocabulary)))
        present = sparse.csr_matrix(((np.ones(len(vals))), (rows, cols)), shape=tf.shape)
        df = np.asarray(present.sum(axis=0)).ravel()
        self.idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        self.df = df
        self.n = n
        self.k1 = k1
        length = np.asarray(lengths, dtype=np.float64)
        self.avgdl = float(length.mean())
        self.lengths = length
        self.b = b
        self.title_b = title_b
        self.raw_tf = tf.tocsr()
        if title_b is None:
            norm = k1 * (1 - b + b * length / length.mean())
            tf = tf.tocoo()
            sat = tf.data * (k1 + 1) / (tf.data + norm[tf.row])
        else:
            # BM25F: tf~ = w_t tf_t / B_t + tf_b / B_b, B_f = 1 - b_f + b_f len_f / avg len_f
            # (averages over every row; a field of length 0 has no counts to add).
            def normalised(name: str, field_lengths: list[int], fb: float) -> sparse.csr_matrix:
                r, c, v = fields[name]
                flen = np.asarray(field_lengths, dtype=np.float64)
                avg = float(flen.mean()) or 1.0
                denom = 1 - fb + fb * flen / avg
                counts = np.asarray(v, dtype=np.float64)
                rr = np.asarray(r, dtype=np.int64)
                return sparse.csr_matrix((counts / denom[rr], (rr, np.asarray(c, dtype=np.int64))),
                                         shape=(n, len(vocabulary)))  # fmt: skip

            pseudo = (title_weight * normalised("title", title_lengths, title_b)
                      + normalised("body", body_lengths, b)).tocoo()  # fmt: skip
            self.title_lengths = np.asarray(title_lengths, dtype=np.float64)
            self.body_lengths = np.asarray(body_lengths, dtype=np.float64)
            tf = pseudo
            sat = tf.data * (k1 + 1) / (tf.data + k1)
        self.matrix = sparse.csc_matrix((sat, (tf.row, tf.col)), shape=tf.shape)
        self.tf = sparse.csr_matrix(present)

    def scores(self, weights: dict[str, float]) -> np.ndarray:
        out = np.zeros(self.n)
        for term, weight in weights.items():
            j = self.vocabulary.get(term)
            if j is None:
                continue
            column = self.matrix.getcol(j)
            out[column.indices] += weight * self.idf[j] * column.data
        return out


def expand(lex: Lexical, vectors: np.ndarray, weight: float, neighbours: float) -> None:
    """Document expansion by dense neighbours (Tao et al. 2006, in BM25 form).

    EXPAND="WEIGHT,M": each chunk's term counts gain WEIGHT x its length x the
    similarity-weighted term distribution of its M nearest chunks (cosine of the
    stored vectors), so a chunk is also found by its neighbours' words; lengths
    and document frequencies stay the original ones. Re-saturates ``lex.matrix``.
    """
    if lex.title_b is not None:
        raise ValueError("EXPAND does not support BM25F (title_b)")
    m = int(neighbours)
    similar = vectors @ vectors.T
    np.fill_diagonal(similar, -np.inf)
    nearest = np.argpartition(-similar, m, axis=1)[:, :m]
    rows = np.repeat(np.arange(len(vectors)), m)
    sims = np.maximum(similar[rows, nearest.ravel()], 0.0)
    mix = sparse.csr_matrix((sims, (rows, nearest.ravel())), shape=similar.shape)
    mix = sparse.diags(1.0 / np.maximum(np.asarray(mix.sum(axis=1)).ravel(), 1e-9)) @ mix
    tf = lex.raw_tf
    distribution = sparse.diags(1.0 / np.maximum(lex.lengths, 1.0)) @ tf
    extra = sparse.diags(weight * lex.lengths) @ (mix @ distribution)
    expanded = (tf + extra).tocoo()
    norm = lex.k1 * (1 - lex.b + lex.b * lex.lengths / lex.avgdl)
    sat = expanded.data * (lex.k1 + 1) / (expanded.data + norm[expanded.row])
    lex.matrix = sparse.csc_matrix((sat, (expanded.row, expanded.col)), shape=expanded.shape)


def smooth_apart(scores: list[float], block: np.ndarray, weight: float, neighbours: int,
                 groups: list[str]) -> np.ndarray:  # fmt: skip
    """`smooth`, a row's own document's other chunks no neighbours of it (the lab's reg_apart)."""
    values = np.asarray(scores, dtype=np.float64)
    if weight <= 0 or len(values) < 2:
        return values
    similar = block @ block.T
    same = np.asarray(groups)[:, None] == np.asarray(groups)[None, :]
    similar[same] = -np.inf  # the diagonal too
    near = np.argsort(-similar, axis=1, kind="stable")[:, : min(neighbours, len(values) - 1)]
    picked = np.take_along_axis(similar, near, axis=1)
    cosines = np.clip(np.where(np.isfinite(picked), picked, 0.0), 0.0, None)
    held = cosines.sum(axis=1)
    mean = (cosines * values[near]).sum(axis=1) / np.maximum(held, 1e-12)
    moved = (1.0 - weight) * values + weight * np.where(held > 0, mean, values)
    best = int(np.argmax(values))
    moved[best] = max(moved[best], values[best])
    return moved


def best_of(scores: dict[int, float], depth: int) -> list[int]:
    """The ``depth`` best keys of a fused ranking, ties by key."""
    return sorted(scores, key=lambda k: (-scores[k], k))[:depth]


def top(scores: np.ndarray, k: int, positive: bool = True) -> list[tuple[int, float]]:
    idx = np.flatnonzero(scores > 0) if positive else np.arange(len(scores))
    if len(idx) > k:
        idx = idx[np.argpartition(-scores[idx], k)[:k]]
    order = sorted(idx, key=lambda i: (-scores[i], i))
    return [(int(i), float(scores[i])) for i in order]


def rrf(lists: dict[str, list[tuple[int, float]]], weights: dict[str, float],
        k: float = 60) -> dict[int, float]:  # fmt: skip
    out: dict[int, float] = {}
    for arm, ranked in lists.items():
        w = weights.get(arm, 1.0)
        for rank, (key, _) in enumerate(ranked, 1):
            out[key] = out.get(key, 0.0) + w / (k + rank)
    return out


def score_fusion(lists: dict[str, list[tuple[int, float]]], how: str, alpha: float,
                 shares: dict[str, float] | None = None,
                 alpha_of: Callable[[int], float] | None = None) -> dict[int, float]:  # fmt: skip
    """``alpha_of``: a per-chunk α (document-length-aware fusion) instead of ``alpha``."""
    out: dict[int, float] = {}
    for arm, ranked in lists.items():
        if not ranked:
            continue
        values = [v for _, v in ranked]
        hi = max(values)
        lo = min(values) if how == "weighted" else (-1.0 if arm == "d" else 0.0)
        if how == "zscore":
            mu, sd = float(np.mean(values)), float(np.std(values)) or 1.0
            norm = {k: (v - mu) / sd for k, v in ranked}
            floor = min(norm.values())
            norm = {k: v - floor for k, v in norm.items()}
        else:
            span = (hi - lo) or 1.0
            norm = {k: (v - lo) / span for k, v in ranked}
        share = alpha if arm == "d" else (1 - alpha) * (shares or {}).get(arm, 1.0)
        for k, v in norm.items():
            if alpha_of is not None:
                a = alpha_of(k)
                share = a if arm == "d" else (1 - a) * (shares or {}).get(arm, 1.0)
            out[k] = out.get(k, 0.0) + share * v
    return out


def to_docs(fused: dict[int, float], doc_of: list[str], depth: int = 100) -> dict[str, float]:
    ranked = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    out: dict[str, float] = {}
    for key, score in ranked:
        doc = doc_of[key]
        if doc not in out:
            out[doc] = score
            if len(out) >= depth:
                break
    # pytrec_eval ranks by score: give strictly decreasing scores in our order.
    return {doc: float(len(out) - i) for i, doc in enumerate(out)}


def rank_biased_overlap(a: list[str], b: list[str], p: float = 0.9) -> float:
    """Webber et al. 2010's RBO of two rankings, truncated at their length (no extrapolation)."""
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    total, depth = 0.0, min(len(a), len(b))
    for d in range(depth):
        seen_a.add(a[d])
        seen_b.add(b[d])
        total += p**d * len(seen_a & seen_b) / (d + 1)
    return (1 - p) * total


def evaluate(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]],
             queries: list[str]) -> float:  # fmt: skip
    evaluator = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in queries}, {"ndcg_cut.10"})
    result = evaluator.evaluate({q: run.get(q, {}) for q in queries})
    return float(np.mean([result[q]["ndcg_cut_10"] if q in result else 0.0 for q in queries]))


Variant = Callable[[str, int], dict[int, float]]


feedback_scores: list[float] = []


def rm3_weights(query_terms: list[str], feedback: list[int], lex: Lexical,
                doc_terms: list[list[str]],
                terms: int, lam: float, prior: str = "rank",
                use_idf: bool = True, max_df: float = 1.0) -> dict[str, float]:  # fmt: skip
    model: dict[str, float] = {}
    seen: Counter[str] = Counter()
    for rank, key in enumerate(feedback):
        words = doc_terms[key]
        if not words:
            continue
        p = 1.0 / (rank + 1) if prior == "rank" else 1.0
        if prior == "score":
            p = feedback_scores[rank] if feedback_scores else 1.0
        for term, count in Counter(words).items():
            model[term] = model.get(term, 0.0) + p * count / len(words)
            seen[term] += 1
    least = min(2, len(feedback))
    for term in list(model):
        j = lex.vocabulary.get(term)
        if seen[term] < least or j is None or lex.df[j] > max_df * lex.n:
            del model[term]  # max_df: no head term (it ranks little and costs a long list)
            continue
        if use_idf:
            model[term] *= math.log1p((lex.n - lex.df[j] + 0.5) / (lex.df[j] + 0.5))
    q = Counter(query_terms)
    expansions = sorted((t for t in model if t not in q), key=lambda t: (-model[t], t))[:terms]
    mass = sum(model[t] for t in expansions) or 1.0
    weights = {t: lam * c / len(query_terms) for t, c in q.items()}
    for t in expansions:
        weights[t] = weights.get(t, 0.0) + (1 - lam) * model[t] / mass
    return weights


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--format", default="judged", choices=["judged", "judged-title", "titled"])
    parser.add_argument("--final", action="store_true", help="also print the held-out half")
    parser.add_argument(
        "--meta-title", action="store_true", help="meta.title as the BM25 title (judged layout)"
    )
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    data = build(dataset, args.format)
    doc_of = data["doc_of"]
    qids = data["query_ids"]
    halves = {"dev": [q for q in qids if split_of(q) == "dev"],
              "heldout": [q for q in qids if split_of(q) == "heldout"], "all": qids}  # fmt: skip
    data["title_terms"] = [tokens(" ".join(t)) for t in data["title_terms"]]
    data["body_terms"] = [tokens(" ".join(t)) for t in data["body_terms"]]
    doc_terms = [t + b for t, b in zip(data["title_terms"], data["body_terms"], strict=True)]
    if args.meta_title:
        # What the indexer makes of meta.title when a document has no `title`: its
        # analysed terms in the title column of every chunk of the document.
        titles = {d.id: d.title for d in dataset.corpus}
        analysed = {i: tokens(" ".join(analyze(t))) for i, t in titles.items() if t}
        data["title_terms"] = [analysed.get(d, []) for d in data["doc_of"]]
        # The engine's feedback passages are the stored title (none: it was not sent)
        # and the text, whose first line is the title: the body column alone.
        doc_terms = list(data["body_terms"])
    lex = Lexical(data, float(os.environ.get("TITLE_WEIGHT", "2")))
    # Sanity: the numpy BM25 ranks like FTS5.
    for q, fts in list(data["fts"].items())[:5]:
        mine = top(lex.scores(Counter(tokens(" ".join(analyze(dataset.queries[q]))))), 10)
        keys = [data["keys"][i] for i, _ in mine]
        if keys[:5] != [k for k, _ in fts[:5]]:
            print(f"warning: {q}: numpy BM25 {keys[:5]} ≠ FTS5 {[k for k, _ in fts[:5]]}")
    vectors, qvec = data["vectors"], data["query_vectors"]
    cos = qvec @ vectors.T
    # As the engine reads a query: its lexical arm and RM3 by `analyze_query` (a
    # snake_case word also in prose's form), its proximity pairs by the code analysis.
    # Cut to its first 64 terms and each weighed as the engine weighs it (issue 50:
    # 1 + ln c, an identifier's parts 1/n each), by the engine's own query_weights.
    qcut = {q: cut_terms(analyze_query(dataset.queries[q])) for q in qids}
    qterms = {q: tokens(" ".join(qcut[q])) for q in qids}
    qweights = {q: query_weights(qcut[q]) for q in qids}
    pterms = {q: tokens(" ".join(analyze_code_many([dataset.queries[q]])[0])) for q in qids}
    lex_first = {q: top(lex.scores(qweights[q]), 100) for q in qids}
    dense_first = {q: top(cos[i], 100, positive=False) for i, q in enumerate(qids)}
    base = bm25_baseline(dataset, 100)
    # GRID='{"alpha": [...], ...}': pipeline() keyword arguments, every combination.
    # A list of such dicts: the union of their grids (one run, one load of the caches).
    grid = eval(os.environ.get("GRID", "{}"))
    grids = grid if isinstance(grid, list) else [grid]
    splade_wanted = any("splade" in g for g in grids)
    learned = splade_scores(dataset, args.format, data) if splade_wanted else None
    splade_first = (
        {q: top(learned[i], 100) for i, q in enumerate(qids)} if learned is not None else {}
    )

    dump: dict[str, dict[str, float]] = {}

    def report(name: str, make: Callable[[str], dict[int, float] | dict[str, float]],
               docs: bool = False) -> None:  # fmt: skip
        needed = qids if args.final or os.environ.get("DUMP") else halves["dev"]
        run = {q: (make(q) if docs else to_docs(make(q), doc_of)) for q in needed}  # type: ignore[arg-type]
        if os.environ.get("DUMP"):
            ev = pytrec_eval.RelevanceEvaluator(dataset.qrels, {"ndcg_cut.10"})
            per = ev.evaluate(run)
            dump[name] = {q: per[q]["ndcg_cut_10"] if q in per else 0.0 for q in qids}
        parts = [f"{h} {evaluate(run, dataset.qrels, halves[h]):.4f}"
                 for h in (("dev", "heldout", "all") if args.final else ("dev",))]  # fmt: skip
        print(f"{name:<48} " + "  ".join(parts), flush=True)

    report("bm25s baseline", lambda q: base[q], docs=True)
    report("lexical (FTS5 bm25)", lambda q: dict(lex_first[q]))
    report("dense", lambda q: dict(dense_first[q]))
    if splade_first:
        report("splade-tiny", lambda q: dict(splade_first[q]))
    for k in (60,):
        report(f"hybrid rrf k={k}", lambda q, k=k: rrf(
            {"s": lex_first[q], "d": dense_first[q]}, {}, k))  # fmt: skip
    cache_first = {q: rrf({"s": lex_first[q], "d": dense_first[q]}, {}) for q in qids}

    def filled(
        q: str,
        lexical: list[tuple[int, float]],
        dense: list[tuple[int, float]],
        terms: list[str],
        which: str,
        cosines: np.ndarray | None = None,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """``fill``: the candidates one arm missed get their exact score in it.

        "dense": cosines for the lexical arm's rows; "lexical": BM25 for the dense
        arm's; "both". Scores stay below each list's best, so the normalisation's
        interval is unchanged; only the missing zeros become real scores.
        """
        have_d = {k for k, _ in dense}
        have_s = {k for k, _ in lexical}
        if which in ("dense", "both"):
            c = cos[qids.index(q)] if cosines is None else cosines
            dense = dense + [(k, float(c[k])) for k, _ in lexical if k not in have_d]
        if which in ("lexical", "both"):
            bm = lex.scores(dict.fromkeys(terms, 1.0))
            lexical = lexical + [(k, float(bm[k])) for k, _ in dense if k not in have_s]
        return lexical, dense

    def feedback_of(q: str, fb: int, fusion: str = "rrf", alpha: float = 0.5,
                    doclevel: bool = False, near: float = 0.0,
                    alike: float = 0.0, diverse: float = 0.0,
                    fill: str = "") -> list[int]:  # fmt: skip
        if fill and fusion != "rrf":
            lexical, dense = filled(q, lex_first[q], dense_first[q], qterms[q], fill)
            first = score_fusion({"s": lexical, "d": dense}, fusion, alpha)
        else:
            first = (
                cache_first[q]
                if fusion == "rrf"
                else score_fusion({"s": lex_first[q], "d": dense_first[q]}, fusion, alpha)
            )
        if near:  # the feedback passages chosen with the proximity stage too
            first = proximity(q, first, near, 8, 30, "bound")
        if alike:  # ... or with the first ranking smoothed (reg_first)
            first = regularised(first, alike, NEIGHBOURS, DEPTH)
        if diverse:  # fb_mmr: the feedback passages chosen by MMR among the first 30 documents
            pool = distinct_documents(first, 30)
            top_score = first[pool[0]] if pool else 1.0
            chosen: list[int] = []
            while pool and len(chosen) < fb:

                def gain(key: int) -> float:
                    near = max((float(vectors[key] @ vectors[c]) for c in chosen), default=0.0)
                    return diverse * first[key] / (top_score or 1.0) - (1 - diverse) * near

                pick = max(pool, key=lambda k: (gain(k), -k))
                chosen.append(pick)
                pool.remove(pick)
            return chosen
        if doclevel and fusion != "rrf":
            # documents in the order of the document-level fusion, each by its best chunk
            docs = score_fusion(
                {"s": collapse(lex_first[q]), "d": collapse(dense_first[q])}, fusion, alpha
            )
            best: dict[str, int] = {}
            for key in sorted(first, key=lambda k: (-first[k], k)):
                best.setdefault(doc_of[key], key)
            order = sorted(docs, key=lambda k: (-docs[k], k))
            return [best[doc_of[k]] for k in order[:fb]]
        return distinct_documents(first, fb)

    def distinct_documents(ranking: dict[int, float], count: int) -> list[int]:
        """The best chunk of each of the first ``count`` documents of ``ranking``."""
        out: list[int] = []
        seen_docs: set[str] = set()
        for key in sorted(ranking, key=lambda k: (-ranking[k], k)):
            if doc_of[key] not in seen_docs:
                seen_docs.add(doc_of[key])
                out.append(key)
            if len(out) >= count:
                break
        return out

    def features_of(q: str) -> dict[str, float]:
        d, lx = dense_first[q], lex_first[q]
        dgap = d[0][1] - d[1][1] if len(d) > 1 else 0.0
        dspread = d[0][1] - d[min(9, len(d) - 1)][1] if d else 0.0
        lgap = (lx[0][1] - lx[1][1]) / lx[0][1] if len(lx) > 1 and lx[0][1] > 0 else 1.0
        lspread = (lx[0][1] - lx[min(9, len(lx) - 1)][1]) / lx[0][1] if lx else 1.0
        top_d = {doc_of[k] for k, _ in d[:10]}
        top_l = {doc_of[k] for k, _ in lx[:10]}
        top5_d = {doc_of[k] for k, _ in d[:5]}
        top5_l = {doc_of[k] for k, _ in lx[:5]}
        # how much of the query's idf mass the lexical winner holds, and its score
        # against the most any document could score (every term saturated)
        known = [lex.vocabulary[t] for t in set(qterms[q]) if t in lex.vocabulary]
        mass = float(sum(lex.idf[j] for j in known)) or 1.0
        held = set(lex.tf[lx[0][0]].indices) if lx else set()
        return {
            "terms": len(qterms[q]),
            "coverage": float(sum(lex.idf[j] for j in known if j in held)) / mass,
            "lnorm": (lx[0][1] / (mass * (lex.k1 + 1))) if lx else 0.0,
            "dtop": d[0][1] if d else 0.0,
            "dgap": dgap,
            "lgap": lgap,
            # >0: the dense arm's winner stands out more than the lexical arm's
            "gapdiff": dgap / (dspread or 1.0) - lgap / (lspread or 1.0),
            "overlap": len(top_d & top_l) / 10.0,
            # issue 33: agreement of the arms' top 5 documents, and rank-biased overlap
            "overlap5": len(top5_d & top5_l) / 5.0,
            "rbo": rank_biased_overlap(
                list(dict.fromkeys(doc_of[k] for k, _ in d))[:20],
                list(dict.fromkeys(doc_of[k] for k, _ in lx))[:20],
            ),
        }

    arm_features = {q: features_of(q) for q in qids}
    if os.environ.get("PRINT_FEATURES"):
        for name in ("dgap", "lgap", "gapdiff", "overlap", "overlap5", "rbo", "coverage",
                     "lnorm", "dtop"):  # fmt: skip
            values = [arm_features[q][name] for q in halves["dev"]]
            cuts = np.quantile(values, [0.1, 0.25, 0.5, 0.75, 0.9])
            shown = " ".join(f"{c:.3f}" for c in cuts)
            print(f"feature {name}: dev quantiles 10/25/50/75/90 {shown}")

    first_key: dict[str, int] = {}
    for i, d in enumerate(doc_of):
        first_key.setdefault(d, i)

    def collapse(ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """Each document once, at its best chunk's place, keyed by its first chunk."""
        out, seen = [], set()
        for key, score in ranked:
            if doc_of[key] not in seen:
                seen.add(doc_of[key])
                out.append((first_key[doc_of[key]], score))
        return out

    def pipeline(
        q: str,
        fb: int = 10,
        terms: int = 10,
        lam: float = 0.6,
        beta: float = 0.0,
        rrf_k: float = 60,
        w_lex: float = 1.0,
        w_dense: float = 1.0,
        keep_first: float = 0.0,
        lexprf: bool = True,
        style: str = "weighted",
        w_exp: float = 1.0,
        fusion: str = "rrf",
        alpha: float = 0.5,
        adaptive: str = "",
        doclevel: bool = False,
        prior: str = "rank",
        use_idf: bool = True,
        min_terms: int = 0,
        gap: float = 9.0,
        dense_short: float = 0.0,
        same_first: bool = True,
        short_terms: int = 0,
        alpha_short: float = 0.0,
        alpha_feature: str = "",
        alpha_slope: float = 0.0,
        alpha_center: float = 0.0,
        splade: float = 0.0,
        min_avgdl: float = 0.0,
        min_fb_len: float = 0.0,
        rrf_below: float = -1.0,
        agree_feature: str = "overlap",
        agg_gamma: float = 0.0,
        agg_top: int = 2,
        agg_floor: int = 0,
        prox: float = 0.0,
        prox_window: int = 2,
        prox_depth: int = 100,
        prox_lex: float = 0.0,
        prox_norm: str = "best",
        prox_first: bool = False,
        prox_pairs: str = "next",
        cover: float = 0.0,
        ordered: float = 0.0,
        ordered_window: int = 2,
        reg: float = 0.0,
        reg_m: int = NEIGHBOURS,
        reg_depth: int = DEPTH,
        len_slope: float = 0.0,
        reg_first: float = 0.0,
        fb_mmr: float = 0.0,
        fill: str = "",
        fill_first: bool = False,
        fb_max_df: float = 1.0,
        reg_apart: bool = False,
    ) -> dict[int, float]:
        # issue 33: RRF for the queries whose arms disagree (agreement below rrf_below)
        if arm_features[q][agree_feature] < rrf_below:
            fusion = "rrf"
        if len(qterms[q]) < short_terms:  # query-length-aware arm weighting
            alpha = alpha_short
        if alpha_feature:  # a per-query α from how sure each arm's first list is
            value = arm_features[q][alpha_feature]
            alpha = min(0.98, max(0.3, alpha + alpha_slope * (value - alpha_center)))
        feedback = feedback_of(q, fb, fusion if same_first else "rrf", alpha, doclevel,
                               prox if prox_first else 0.0, reg_first, fb_mmr,
                               fill if fill_first else "")  # fmt: skip
        if len(qterms[q]) < min_terms:
            lexprf, beta = False, 0.0
        if lex.avgdl < min_avgdl:  # issue 33: no feedback on a corpus of short documents
            lexprf, beta = False, 0.0
        # issue 33: the feedback passages (their analysed terms, as the engine's
        # prf.second_pass reads them) are too short to learn a vocabulary from
        if feedback and float(np.mean([len(doc_terms[k]) for k in feedback])) < min_fb_len:
            lexprf, beta = False, 0.0
        if dense_short and len(qterms[q]) < min_terms:
            w_dense = dense_short
        d1 = dense_first[q]
        if len(d1) > 1 and d1[0][1] - d1[1][1] > gap:
            lexprf, beta = False, 0.0
        if (
            adaptive == "agree"
            and lex_first[q]
            and doc_of[lex_first[q][0][0]] == doc_of[dense_first[q][0][0]]
        ):
            lexprf, beta = False, 0.0
        i = qids.index(q)
        extra: dict[str, list[tuple[int, float]]] = {}
        second_terms = qterms[q]
        if lexprf and style == "separate":
            weights = rm3_weights(qterms[q], feedback, lex, doc_terms, terms, lam)
            expansion = [t for t in weights if t not in set(qterms[q])]
            second = lex_first[q]
            extra["x"] = top(lex.scores(dict.fromkeys(expansion, 1.0)), 100)
        elif lexprf and style == "flat":
            weights = rm3_weights(qterms[q], feedback, lex, doc_terms, terms, lam, prior, use_idf,
                                  fb_max_df)  # fmt: skip
            second_terms = list(weights)
            counted = {t: qweights[q].get(t, 1.0) for t in weights}  # the engine's query
            second = top(lex.scores(counted), 100)
        elif lexprf and style == "repeat":
            weights = rm3_weights(qterms[q], feedback, lex, doc_terms, terms, lam)
            unit = min(w for t, w in weights.items() if t in set(qterms[q]))
            second = top(
                lex.scores({t: float(min(4, max(1, round(w / unit)))) for t, w in weights.items()}),
                100,
            )
        elif lexprf:
            weights = rm3_weights(qterms[q], feedback, lex, doc_terms, terms, lam)
            second = top(lex.scores(weights), 100)
        else:
            second = lex_first[q]
        if beta > 0:
            centroid = vectors[feedback].mean(axis=0)
            v = qvec[i] + beta * centroid
            v = v / np.linalg.norm(v)
            dense = top(vectors @ v, 100, positive=False)
        else:
            dense = dense_first[q]
        if fill:  # each arm's exact score for the other arm's candidates too
            second, dense = filled(q, second, dense, second_terms, fill,
                                   None if beta <= 0 else vectors @ v)  # fmt: skip
        if prox_lex:  # SDM's way: the pairs are part of the lexical arm's score
            bonus = pair_scores(q, [k for k, _ in second], prox_window, prox_pairs)
            second = sorted(((k, v + prox_lex * bonus.get(k, 0.0)) for k, v in second),
                            key=lambda kv: (-kv[1], kv[0]))  # fmt: skip
        lists = {"s": second, "d": dense, **extra}
        weights_ = {"s": w_lex, "d": w_dense, "x": w_exp}
        if keep_first:
            lists["s1"] = lex_first[q]
            weights_["s1"] = keep_first
        shares = None
        if splade:  # the learned-sparse arm takes this part of the lexical share
            lists["p"] = splade_first[q]
            shares = {"s": 1.0 - splade, "p": splade}
            weights_["s"] *= 1.0 - splade
            weights_["p"] = splade
        if doclevel:
            lists = {arm: collapse(ranked) for arm, ranked in lists.items()}
        if fusion == "rrf":
            chunks = rrf(lists, weights_, rrf_k)
        else:
            # Document-length-aware fusion: a chunk shorter than the average leans on
            # the dense arm more (len_slope > 0), a longer one on BM25.
            alpha_of = (
                (lambda key: min(0.98, max(0.3, alpha - len_slope * math.log(
                    max(lex.lengths[key], 1.0) / lex.avgdl))))
                if len_slope else None
            )  # fmt: skip
            chunks = score_fusion(lists, fusion, alpha, shares, alpha_of)
        if prox:
            chunks = proximity(q, chunks, prox, prox_window, prox_depth, prox_norm, prox_pairs)
        if ordered:  # SDM's ordered part: b within ordered_window positions after a
            pairs, idf = pair_weights(q, "next")
            bound = bound_of_pairs(pairs, idf, lex.k1) if pairs else 0.0
            head = best_of(chunks, 30)
            chunks = dict(chunks)
            for key in head if bound else []:
                where = positions_of(doc_terms[key])
                total = 0.0
                for a, b in pairs:
                    after = set(where.get(b, ()))
                    c = sum(1 for i in where.get(a, ()) if any(i + d in after
                            for d in range(1, ordered_window + 1)))  # fmt: skip
                    if c:
                        total += (idf[a] + idf[b]) / 2 * c * (lex.k1 + 1) / (c + lex.k1)
                chunks[key] += ordered * total / bound
        if cover:  # coordination: the share of the query's idf mass a candidate holds
            known = {t for t in qterms[q] if t in lex.vocabulary}
            mass = sum(float(lex.idf[lex.vocabulary[t]]) for t in known) or 1.0
            head = best_of(chunks, 30)
            chunks = dict(chunks)
            for key in head:
                held = known & set(doc_terms[key])
                share = sum(float(lex.idf[lex.vocabulary[t]]) for t in held) / mass
                chunks[key] += cover * share
        if reg:  # score regularisation (Diaz 2005): each of the head towards its neighbours
            chunks = regularised(chunks, reg, reg_m, reg_depth, reg_apart)
        return aggregate(chunks, agg_gamma, agg_top, agg_floor) if agg_gamma else chunks

    def regularised(chunks: dict[int, float], mu: float, m: int, depth: int,
                    apart: bool = False) -> dict[int, float]:  # fmt: skip
        """The fused head's scores smoothed among themselves (``rcpkit.engine.scoring.smoothing``).

        ``apart``: a chunk's neighbours are other documents' chunks only.
        """
        head = best_of(chunks, depth)
        if apart:
            moved = smooth_apart([chunks[k] for k in head], vectors[head], mu, m,
                                 [doc_of[k] for k in head])  # fmt: skip
            return {**chunks, **dict(zip(head, (float(v) for v in moved), strict=True))}
        moved = smooth([chunks[k] for k in head], vectors[head], mu, m)
        return {**chunks, **dict(zip(head, (float(v) for v in moved), strict=True))}

    def proximity(
        q: str, chunks: dict[int, float], gamma: float, window: int, depth: int, norm: str,
        which: str = "next",
    ) -> dict[int, float]:  # fmt: skip
        """Term proximity (SDM's unordered-window part) over the fused top ``depth``.

        A pair of consecutive query terms scores in a chunk when both occur within
        ``window`` analysed positions of each other; the pair's weight is its terms'
        mean idf, its count saturated as BM25 saturates a term's (the engine's
        ``rcpkit.engine.scoring.proximity``). The chunks' sum, divided by the best
        candidate's (``norm`` "best") or by the most the query's pairs could score
        ("bound", as ``rcpkit.engine.retrieve.proximity`` does), is added with weight
        ``gamma`` (the engine also divides by 1 + gamma: the same order).
        """
        ranked = best_of(chunks, depth)
        score = pair_scores(q, ranked, window, which)
        best = max(score.values(), default=0.0)
        if norm == "bound":  # the most the query's pairs could score: list-independent
            best = pair_bound(q, which)
        if best <= 0:
            return chunks
        out = dict(chunks)
        for key, value in score.items():
            out[key] = out[key] + gamma * value / best
        return out

    def pair_weights(q: str, which: str) -> tuple[list[tuple[str, str]], dict[str, float]]:
        """The query's neighbouring pairs (``which`` "all": every pair, FDM's) and idf."""
        terms = [t for t in pterms[q] if t in lex.vocabulary]
        pairs = (
            pairs_of(terms)
            if which == "next"
            else list(dict.fromkeys(p for p in itertools.combinations(terms, 2) if p[0] != p[1]))
        )
        return pairs, {t: float(lex.idf[lex.vocabulary[t]]) for pair in pairs for t in pair}

    def pair_bound(q: str, which: str) -> float:
        pairs, idf = pair_weights(q, which)
        return bound_of_pairs(pairs, idf, lex.k1)

    def pair_scores(q: str, ranked: list[int], window: int, which: str) -> dict[int, float]:
        pairs, idf = pair_weights(q, which)
        if not pairs:
            return {}
        passages = [positions_of(doc_terms[key]) for key in ranked]
        return dict(zip(ranked, proximity_scores(pairs, passages, idf, lex.k1, window),
                        strict=True))  # fmt: skip

    def aggregate(
        chunks: dict[int, float], gamma: float, best: int, floor_rank: int
    ) -> dict[int, float]:
        """issue 33: a document's score is its best chunk's plus gamma × its next best ones'.

        The next ones count above a floor: the list's last score (``floor_rank`` 0) or
        the one at that rank (the convex dense arm's normalised scores are all high).
        """
        per_doc: dict[str, list[float]] = {}
        for key, score in chunks.items():
            per_doc.setdefault(doc_of[key], []).append(score)
        ordered = sorted(chunks.values(), reverse=True)
        floor = ordered[min(floor_rank, len(ordered)) - 1] if floor_rank else ordered[-1]
        out = {}
        for doc, scores in per_doc.items():
            scores.sort(reverse=True)
            out[first_key[doc]] = scores[0] + gamma * sum(
                max(0.0, v - floor) for v in scores[1:best]
            )
        return out

    # BM25_GRID='{"k1": [...], "b": [...], "title_weight": [...]}': the lexical arm's
    # parameters (the stores' `bm25_*` settings), the dense arm and its cache unchanged.
    # "title_b": [None, 0.3, ...] adds BM25F points (None: the FTS5 form); every value
    # is in the point's label, and nothing of the lexical arm is cached on disk.
    bm25_grid = eval(os.environ.get("BM25_GRID", "{}"))
    settings = [
        dict(zip(bm25_grid, v, strict=True)) for v in itertools.product(*bm25_grid.values())
    ]
    for setting in settings or [{}]:
        prefix = " ".join(f"{k}={v}" for k, v in setting.items())
        if setting:
            # title_b None (or absent): the single-length FTS5 form; a number: BM25F
            lex = Lexical(data, **{k: None if v is None else float(v) for k, v in setting.items()})
            if os.environ.get("EXPAND"):
                expand(lex, data["vectors"], *(float(v) for v in os.environ["EXPAND"].split(",")))
            lex_first = {q: top(lex.scores(qweights[q]), 100) for q in qids}
            cache_first = {q: rrf({"s": lex_first[q], "d": dense_first[q]}, {}) for q in qids}
            arm_features = {q: features_of(q) for q in qids}  # of this lexical arm
            report(f"[{prefix}] lexical", lambda q, first=lex_first: dict(first[q]))
        points = [
            dict(zip(g, values, strict=True))
            for g in grids
            for values in itertools.product(*g.values())
        ]
        for params in points:
            report(
                (f"[{prefix}] " if prefix else "")
                + "pipe "
                + " ".join(f"{k}={v}" for k, v in params.items()),
                lambda q, params=params: pipeline(q, **params),
            )
    if os.environ.get("DUMP"):
        features = {
            q: {
                **arm_features[q],
                "agree": bool(lex_first[q])
                and doc_of[lex_first[q][0][0]] == doc_of[dense_first[q][0][0]],
                "split": split_of(q),
            }
            for q in qids
        }
        with open(os.environ["DUMP"], "wb") as handle:
            pickle.dump({"ndcg": dump, "features": features}, handle)


if __name__ == "__main__":
    main()
