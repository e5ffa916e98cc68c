"""Recall and fusion: the dense and lexical arms at one index version, fused by score or rank."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import numpy.typing as npt

from rcpkit.engine.engine import Engine
from rcpkit.engine.filters import Filter
from rcpkit.engine.models import is_external
from rcpkit.engine.query import Query
from rcpkit.engine.request import EngineRequest
from rcpkit.engine.retrieve.stages import Candidate
from rcpkit.engine.scoring.bm25 import query_weights
from rcpkit.engine.text.analysis import analyze_query
from rcpkit.protocol.fusion import FusionOptions, fuse

__all__ = [
    "MAX_QUERY_TERMS",
    "NO_QUERY_WORDS",
    "SCORE_CEILINGS",
    "SCORE_FLOORS",
    "Arms",
    "Recalled",
    "combine",
    "cut_terms",
    "fused",
    "recall",
    "recall_depth",
    "search_arms",
]

Arms = dict[str, list[tuple[int, float]]]  # arm name → (chunk key, raw score), best first

# §6.1 scoreFloor per arm: cosine >= -1, BM25 and SPLADE dot products >= 0; fused >= 0.
SCORE_FLOORS = {"dense": -1.0, "sparse": 0.0, "splade": 0.0}
# Cosine's ceiling: the dense arm's scale when no lexical arm returned anything
# (protocol.fusion `_scaled_alone`), so its nearest chunk is not shown as a perfect hit.
SCORE_CEILINGS = {"dense": 1.0}
NO_QUERY_WORDS = "no chunk contains the query's words"
MAX_QUERY_TERMS = 64  # a huge query is cut to its first terms (noted), not rejected
_ARMS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="rcpkit-recall")


@dataclass(slots=True)
class Recalled:
    candidates: list[Candidate]
    count: int  # distinct candidates over all arms
    floor: float  # the score floor of the final scores
    query_vector: npt.NDArray[np.float32]
    vectors: dict[int, npt.NDArray[np.float32]] = field(default_factory=dict)
    arms: Arms = field(default_factory=dict)  # what was fused (a second pass reuses arms)


def recall(
    engine: Engine,
    query: Query,
    text: str,
    version: int,
    depth: int,
    ctx: EngineRequest,
) -> Recalled:
    """Run the arms of ``query.mode`` for ``text`` at ``version``; candidates best-first."""
    arms, query_vector = search_arms(engine, query, text, None, None, version, depth, ctx)
    if text == query.text and _no_lexical_match(arms) and NO_QUERY_WORDS not in ctx.notes:
        ctx.notes.append(NO_QUERY_WORDS)
    return fused(engine, query, arms, query_vector)


def _no_lexical_match(arms: Arms) -> bool:
    """Whether the query's lexical arms ran and found no chunk holding any of its words."""
    lexical = [ranked for arm, ranked in arms.items() if arm != "dense"]
    return bool(lexical) and not any(lexical)


def search_arms(
    engine: Engine,
    query: Query,
    text: str,
    query_vector: npt.NDArray[np.float32] | None,
    terms: list[str] | None,
    version: int,
    depth: int,
    ctx: EngineRequest,
    only: tuple[str, ...] = ("dense", "sparse", "splade"),
    expands: list[tuple[int, float]] | None = None,
) -> tuple[Arms, npt.NDArray[np.float32]]:
    """The ranked list of each arm of ``query.mode`` in ``only``, for ``text`` at ``version``.

    ``query_vector`` None: ``text`` is embedded here, while the lexical arm runs.
    ``terms``: the lexical arm's analysed terms (None: those of ``text``);
    ``expands``: the lexical list of the query they expand (see `_lexical`).
    """
    mode = query.effective_mode
    tree = query.filter  # §8: parsed and checked once, by the server runtime
    candidate_k = recall_depth(engine, query, depth)
    # §7.7.1: every arm reads exactly `version` (stores map the latest to their fast
    # path), even if another process on a shared store committed since it was resolved.
    tenant = ctx.tenant
    arms: Arms = {}
    # Hybrid: the lexical arm runs on a pool thread while this one embeds and searches
    # the dense arm (numpy and the embedders release the GIL), then both are fused.
    # Alone (the feedback pass's lexical arm again), it runs here: a hand-off to a
    # thread with nothing to overlap only adds its wake-up to the request.
    overlap = query_vector is None or "dense" in only
    search = partial(_lexical, engine, text, terms, candidate_k, tree, version, ctx, expands)
    lexical = (
        # With this request's context: its deadline and partial-read scope (store/).
        _ARMS.submit(copy_context().run, search)
        if mode == "hybrid" and "sparse" in only and overlap
        else None
    )
    if query_vector is None:
        query_vector = vector_of(engine, query, text, ctx)
    if mode in ("dense", "hybrid") and "dense" in only:
        arms["dense"] = engine.dense.search(query_vector, candidate_k, tree, version, tenant)
    if mode in ("sparse", "hybrid") and "sparse" in only:
        arms["sparse"] = lexical.result() if lexical is not None else search()
    encoder = engine.sparse_encoder(ctx.check_cancelled) if "splade" in only else None
    if mode in ("sparse", "hybrid") and encoder is not None:
        # §3.1: learned-sparse recall joins the sparse arm
        (vector,) = encoder.encode([text], "query")
        arms["splade"] = engine.store.index.learned_sparse(
            vector.indices.tolist(),
            vector.values.tolist(),
            candidate_k,
            tree,
            version,
            tenant,
        )
    ctx.check_cancelled()
    return arms, query_vector


def recall_depth(engine: Engine, query: Query, depth: int) -> int:
    """How deep each arm reads: ``candidateK``, else the engine's default, at least ``depth``.

    §7.7: without ``candidateK`` the server chooses. A hybrid retrieve reads each arm
    ``fusion_depth_factor`` × ``depth`` deep at least: at a depth of 100 documents, a
    pool of 100 chunks per arm held fewer of the relevant documents than the RRF of
    two top-100 lists (issue 50: man-verbose dev R@100 0.984 → 0.995, docs/quality.md).
    """
    if query.candidate_k is not None:
        return max(query.candidate_k, depth)
    hybrid = query.effective_mode == "hybrid"
    floor = depth * engine.config.fusion_depth_factor if hybrid else depth
    return max(engine.config.default_candidate_k, floor)


def vector_of(
    engine: Engine, query: Query, text: str, ctx: EngineRequest
) -> npt.NDArray[np.float32]:
    """The dense arm's query vector: the caller's own, else ``text`` embedded.

    An index of your own vectors embeds no text: a sparse search without a vector
    gets the zero vector (no dense arm reads it; hits' cosines are 0).
    """
    if query.vector is not None:
        return np.asarray(query.vector, dtype=np.float32)
    if query.effective_mode == "sparse" and is_external(engine.identity):
        return np.zeros(engine.dimension, dtype=np.float32)
    rows = engine.embedder(ctx.check_cancelled).embed([text], "query")
    vector: npt.NDArray[np.float32] = rows[0]
    return vector


def fused(
    engine: Engine,
    query: Query,
    arms: Arms,
    query_vector: npt.NDArray[np.float32],
    known: dict[int, npt.NDArray[np.float32]] | None = None,
) -> Recalled:
    """The arms fused by ``query.fusion``, with the candidates' vectors (``known``: read before)."""
    candidates = combine(arms, query)
    count = len({key for ranked in arms.values() for key, _ in ranked})
    floor = SCORE_FLOORS["dense"] if query.effective_mode == "dense" else 0.0
    known = known or {}
    vectors = {c.key: known[c.key] for c in candidates if c.key in known}
    vectors.update(engine.dense.vectors_of([c.key for c in candidates if c.key not in vectors]))
    return Recalled(candidates, count, floor, query_vector, vectors, arms)


def _lexical(
    engine: Engine,
    text: str,
    terms: list[str] | None,
    k: int,
    tree: Filter | None,
    version: int | None,
    ctx: EngineRequest,
    expands: list[tuple[int, float]] | None = None,
) -> list[tuple[int, float]]:
    """The lexical arm: ``terms``, or the query's own (``text``'s) when None.

    ``expands``: the query's own lexical list when ``terms`` expand it (the
    feedback pass). BM25 sums over distinct terms, each part ≥ 0 and scaled by
    the term's weight, so if every term of the query is among ``terms`` with at
    least its weight, each row scores at least what it did and the list's k-th
    score bounds the new k-th from below: the top k prunes with it instead of
    scoring seed rows first. ``terms`` given are already cut (`cut_terms` cuts
    the query's own; an expansion adds its terms after them).
    """
    own = cut_terms(analyze_query(text), ctx)  # identifiers as code and as prose index them
    terms = own if terms is None else terms
    floor = 0.0
    if expands is not None and len(expands) >= k and _widens(own, terms):
        floor = expands[k - 1][1] * (1 - 1e-9)  # summed in another order: a margin
    return engine.store.index.lexical(terms, k, tree, version, ctx.tenant, floor=floor)


def _widens(own: list[str], terms: list[str]) -> bool:
    """Whether ``terms`` hold every term of ``own`` with at least its weight."""
    if terms is own:
        return False
    weights = query_weights(terms)
    return all(weights.get(token, 0.0) >= w for token, w in query_weights(own).items())


def cut_terms(terms: list[str], ctx: EngineRequest | None = None) -> list[str]:
    """``terms`` as the lexical arm reads them: the first ``MAX_QUERY_TERMS`` (noted once)."""
    if len(terms) <= MAX_QUERY_TERMS:
        return terms
    note = f"query cut to its first {MAX_QUERY_TERMS} terms for lexical recall"
    if ctx is not None and note not in ctx.notes:
        ctx.notes.append(note)
    return terms[:MAX_QUERY_TERMS]


def combine(arms: Arms, query: Query) -> list[Candidate]:
    """The arms' lists as one ranking, by ``query``'s fusion (one arm: as it is)."""
    if len(arms) == 1:
        ((arm, ranked),) = arms.items()
        return [Candidate(key, score, {arm: score}) for key, score in ranked]
    fusion = query.effective_fusion
    options = FusionOptions(
        rrf_k=fusion.rrf_k, alpha=fusion.alpha, floors=SCORE_FLOORS, ceilings=SCORE_CEILINGS
    )
    fused = fuse(fusion.method, arms, fusion.weights, options)
    scores: dict[int, dict[str, float]] = {}  # each key's raw score per arm, in arm order
    for arm, ranked in arms.items():
        for key, score in ranked:
            scores.setdefault(key, {})[arm] = score
    out = []
    for item in fused:
        own = scores.get(item.key, {})
        own["fused"] = item.score
        out.append(Candidate(item.key, item.score, own))
    return out
