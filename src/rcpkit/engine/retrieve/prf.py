"""The default retrieve's second pass: pseudo-relevance feedback on the lexical arm.

The first hybrid ranking's top ``prf_documents`` (10) distinct documents are
taken as relevant (Rocchio 1971; Lavrenko & Croft 2001). RM3 over their
analysed terms (``expansion_terms``: 10 terms, rank prior, Anserini's fbDocs
and fbTerms, not tuned here) proposes new terms; the query's terms and those
are OR-ed into one BM25 query, whose ranking replaces the first lexical arm,
and the arms are fused again as the first time.

Measured on the dev halves (``benchmarks/quality_lab.py``; nothing was
chosen on a held-out half), nDCG@10, Cranfield / docstrings:

* hybrid without feedback 0.365 / 0.633; with this pass 0.397 / 0.635;
* RM3 weights as BM25 query weights instead of the flat OR: 0.401 / 0.637,
  within noise; measured again once the stores' BM25 weighed a query term by
  its count (issue 50; the flat query keeps those counts): lower on the dev
  halves of Cranfield and of the long-query collection man-verbose at every
  λ 0.5–0.8, and on man-verbose's held-out half (docs/quality.md);
* an idf factor on the RM3 weights: 0.395 / 0.633; a uniform prior: worse;
* Rocchio on the dense arm too (``prf_dense_weight`` β, off by default):
  β 0.5 0.399 / 0.631, β 1 0.403 / 0.624 — a gain on one collection, a loss
  on the other, and a second dense search;
* skipping feedback when both arms agree on the top document: a loss on
  Cranfield (0.381 against 0.401), noise on docstrings.

Held out (BENCHMARKS.md), the pass gains on Cranfield (0.434 → 0.450) and
loses on the docstring known-item collection (0.616 → 0.597). Since the
default fusion became convex α 0.8 (rcpkit.engine.retrieve.recall), both
passes fuse that way: dev 0.409 / 0.652, held out 0.452 / 0.621; with α 0.85
and BM25 k1 0.9, b 0.6, title 3 (third round): dev 0.402 / 0.658, held out
0.443 / 0.629.

The cost is one BM25 query and a fetch of the feedback chunks; no model
runs again. Only a plain hybrid request takes it: an explicit ``mode``,
``fusion`` or ``rewrite`` asks for exactly that pipeline, and ``[engine]
prf = false`` turns it off.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rcpkit.engine.engine import Engine
from rcpkit.engine.query import Query
from rcpkit.engine.request import EngineRequest
from rcpkit.engine.retrieve.bodies import is_code, remember_bodies
from rcpkit.engine.retrieve.recall import Recalled, cut_terms, fused, search_arms
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.scoring.rm3 import expansion_terms
from rcpkit.engine.store.base import ChunkRow
from rcpkit.engine.store.snapshot import fetch_rows
from rcpkit.engine.text.analysis import analyze_query, stored_terms

__all__ = ["EXPANDED_WITH", "applies", "expansion_terms", "feedback_terms", "second_pass"]

EXPANDED_WITH = "feedback added the terms: "  # usage.notes; the CLI and console read it
_MIN_FEEDBACK = 2  # fewer distinct documents than this: nothing to learn from


def applies(engine: Engine, query: Query) -> bool:
    """Whether this request gets the feedback pass (a default hybrid retrieve)."""
    config = engine.config
    plain = query.effective_mode == "hybrid" and query.fusion is None
    return config.prf and plain and not query.rewrite and config.prf_documents >= _MIN_FEEDBACK


def second_pass(
    engine: Engine,
    query: Query,
    text: str,
    first: Recalled,
    version: int,
    depth: int,
    ctx: EngineRequest,
) -> Recalled:
    """The lexical arm again, expanded from the first pass's top documents; ``first`` if too few."""
    config = engine.config
    first_lexical = first.arms.get("sparse")
    if first_lexical is not None and not first_lexical:
        # No chunk holds a query word: the feedback documents would be the dense arm's
        # nearest alone, and terms learnt from them only echo that ranking as lexical
        # evidence it does not have (issue 52: a perfect score for an unrelated chunk).
        return first
    feedback = feedback_terms(engine, text, first.candidates)
    if feedback is None:
        return first
    keys, terms = feedback
    _note_expansion(terms, text, ctx)
    vectors = [first.vectors[key] for key in keys if key in first.vectors]
    expanded = first.query_vector
    again: tuple[str, ...] = ("sparse",)
    if vectors and config.prf_dense_weight > 0:
        moved = first.query_vector + config.prf_dense_weight * np.mean(vectors, axis=0)
        expanded = (moved / max(float(np.linalg.norm(moved)), 1e-12)).astype(np.float32)
        again = ("dense", "sparse")
    arms, _ = search_arms(
        engine, query, text, expanded, terms, version, depth, ctx, again, first_lexical
    )
    for arm, ranked in first.arms.items():
        arms.setdefault(arm, ranked)  # the arms not searched again keep their first lists
    return fused(engine, query, arms, first.query_vector, first.vectors)


def _note_expansion(terms: list[str], text: str, ctx: EngineRequest) -> None:
    """Say which lexical terms came from feedback, not from the query (as the index holds them)."""
    own = set(analyze_query(text))
    added = [term for term in terms if term not in own]
    if added:
        ctx.notes.append(f"{EXPANDED_WITH}{', '.join(added)}")


def feedback_terms(
    engine: Engine, text: str, ranking: Sequence[Candidate]
) -> tuple[list[int], list[str]] | None:
    """The feedback chunks of ``ranking`` and the query's terms with RM3's; None: no pass.

    No pass when fewer than two documents lead the ranking, or when their chunks
    average fewer analysed terms than ``prf_min_feedback_terms``.
    """
    config = engine.config
    keys, rows = _feedback_keys(engine, ranking, config.prf_documents)
    if len(keys) < _MIN_FEEDBACK:
        return None
    # Title and body analysed apart (the same terms as together), each as the index
    # analysed it (a code body identifier-aware), and the query as the first lexical
    # pass analyses it: the expanded query then holds the first one's terms, and its
    # new terms are terms the index holds. The proximity stage reads the same bodies'
    # terms from the same cache, the index's where it has them.
    remember_bodies(engine.store, {key: rows[key] for key in keys})
    passages = [
        stored_terms(rows[key].title or "", is_code(rows[key]))
        + stored_terms(rows[key].text, is_code(rows[key]))
        for key in keys
    ]
    if np.mean([len(terms) for terms in passages]) < config.prf_min_feedback_terms:
        return None  # issue 33: titles and one-liners hold no vocabulary to learn
    # The query's own terms as the first pass read them (cut, repeats kept: a repeat
    # weighs the term, bm25), then the new ones: a long query keeps its expansion.
    own = cut_terms(analyze_query(text))
    return keys, own + expansion_terms(own, passages, config.prf_terms)


def _feedback_keys(
    engine: Engine, ranking: Sequence[Candidate], documents: int
) -> tuple[list[int], dict[int, ChunkRow]]:
    """The best chunk of each of the first ``documents`` distinct documents.

    Read in two steps: the first ``documents`` + a half are enough when the
    documents are one chunk each; the rest of the first ``4 · documents`` only
    when some of those were the same document's.
    """
    head = [c.key for c in ranking[: documents * 4]]
    first = documents + documents // 2
    rows = fetch_rows(engine.store, head[:first])
    keys = _distinct(head[:first], rows, documents)
    if len(keys) < documents and len(head) > first:
        rows.update(fetch_rows(engine.store, head[first:]))
        keys = _distinct(head, rows, documents)
    return keys, rows


def _distinct(head: Sequence[int], rows: dict[int, ChunkRow], documents: int) -> list[int]:
    keys: list[int] = []
    seen: set[str] = set()
    for key in head:
        row = rows.get(key)
        if row is None or row.doc_id in seen:
            continue
        seen.add(row.doc_id)
        keys.append(key)
        if len(keys) >= documents:
            break
    return keys
