"""Fusion across engines (§16.3): strategies and identity keys, each looked up by name.

Strategies: ``calibrated`` (score-aware: every hit's ``confidence``, or the
gateway's per-engine estimate, made monotone along the engine's ranking and
summed by weight; :mod:`rcpkit.federation.calibration`), ``rrf``,
``weighted`` (per-engine min-max) and ``convex`` (the interval's minimum is
each engine's advertised ``scoreFloor``; falls back to RRF when any engine
lacks one). The rank and min-max
arithmetic is the one the engine uses too (:mod:`rcpkit.protocol.fusion`), applied here
with engines as the arms. Ties break by fused score, then summed weight,
then the smaller stringified id, so the order never depends on which engine
answered first. Duplicates collapse on an identity key (``id``, ``content``
or ``uri``), keeping the richest body and merging ``meta``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from rcpkit.federation.calibration import SessionCalibration
from rcpkit.protocol.content import Citation, Hit
from rcpkit.protocol.fusion import FUSION, RRF_K, FusionOptions, Ranked
from rcpkit.protocol.messages import Usage

__all__ = [
    "DEDUP_KEYS",
    "FUSION_STRATEGIES",
    "RRF_K_DEFAULT",
    "EngineHits",
    "Fused",
    "FusionConfig",
    "attribution",
    "fuse_hits",
]

RRF_K_DEFAULT = RRF_K  # the engine's, so one gateway and one engine rank alike


@dataclass(frozen=True, slots=True)
class FusionConfig:
    """``weights`` override the registry's per-engine weights (by engine id)."""

    method: str = "rrf"
    rrf_k: int = RRF_K_DEFAULT
    dedup: str = "id"
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in FUSION_STRATEGIES:
            raise ValueError(f"fusion method {self.method!r}: one of {sorted(FUSION_STRATEGIES)}")
        if self.dedup not in DEDUP_KEYS:
            raise ValueError(f"dedup key {self.dedup!r}: one of {sorted(DEDUP_KEYS)}")
        if self.rrf_k < 1:
            raise ValueError("rrfK must be >= 1")


@dataclass(frozen=True, slots=True)
class EngineHits:
    """One engine's ranked list (best first) with its weight and advertised score floor."""

    engine: str
    hits: Sequence[Hit]
    weight: float = 1.0
    score_floor: float | None = None
    usage: Usage | None = None  # the engine's own usage (its notes are passed on)


@dataclass(frozen=True, slots=True)
class Fused:
    hits: list[Hit]
    method: str
    notes: list[str]


Strategy = Callable[[Mapping[str, Ranked], Mapping[str, float], "_Inputs"], dict[int, float]]


@dataclass(frozen=True, slots=True)
class _Inputs:
    rrf_k: int
    floors: Mapping[str, float | None]
    # calibrated: each engine's calibrated relevance, aligned with its ranked list
    calibrated: Mapping[str, Sequence[float]] = field(default_factory=dict)


def _rrf(lists: Mapping[str, Ranked], weights: Mapping[str, float], o: _Inputs) -> dict[int, float]:
    return FUSION["rrf"](lists, weights, FusionOptions(rrf_k=o.rrf_k))


def _weighted(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: _Inputs
) -> dict[int, float]:
    return FUSION["weighted"](lists, weights, FusionOptions())


def _convex(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: _Inputs
) -> dict[int, float]:
    # Each engine's scores are mapped onto [floor, observed max] -> [0, 1] and
    # mixed with its weight's share of the total, so the mix is convex.
    total = sum(weights.get(engine, 1.0) for engine in lists) or 1.0
    scores: dict[int, float] = {}
    for engine, ranked in lists.items():
        if not ranked:
            continue
        floor = o.floors.get(engine)
        assert floor is not None
        share = weights.get(engine, 1.0) / total
        top = max(score for _, score in ranked)
        low = min(floor, *(score for _, score in ranked))
        span = top - low
        for key, score in ranked:
            value = (score - low) / span if span > 0 else 0.0
            scores[key] = scores.get(key, 0.0) + share * value
    return scores


def _calibrated(
    lists: Mapping[str, Ranked], weights: Mapping[str, float], o: _Inputs
) -> dict[int, float]:
    # §6.1: across servers, the normalised confidence (or the gateway's estimate of it),
    # never the raw score. A tiny rank term orders a pooled (tied) run by the engine's
    # own ranks, as RRF would.
    scores: dict[int, float] = {}
    for engine, ranked in lists.items():
        weight = weights.get(engine, 1.0)
        values = o.calibrated[engine]
        for rank, ((key, _), value) in enumerate(zip(ranked, values, strict=True), 1):
            bonus = 1e-6 / (o.rrf_k + rank)
            scores[key] = scores.get(key, 0.0) + weight * (value + bonus)
    return scores


FUSION_STRATEGIES: dict[str, Strategy] = {
    "calibrated": _calibrated,
    "rrf": _rrf,
    "weighted": _weighted,
    "convex": _convex,
}


def _by_id(hit: Hit) -> str:
    return f"id:{hit.id}"


def _by_content(hit: Hit) -> str:
    body = " ".join((hit.text or "").split())
    if not body and hit.content:
        body = msgspec.json.encode(hit.content).decode()
    if not body:
        return _by_id(hit)
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def _by_uri(hit: Hit) -> str:
    uri = hit.citation.uri if hit.citation is not None else None
    return f"uri:{uri}" if uri else _by_id(hit)


DEDUP_KEYS: dict[str, Callable[[Hit], str]] = {
    "id": _by_id,
    "content": _by_content,
    "uri": _by_uri,
}


@dataclass(slots=True)
class _Candidate:
    # (engine, 1-based rank, hit) for every engine that returned this identity
    sources: list[tuple[str, int, Hit]] = field(default_factory=list)


def fuse_hits(
    lists: Sequence[EngineHits],
    k: int | None,
    config: FusionConfig,
    calibration: SessionCalibration | None = None,
) -> Fused:
    """One ranked list from many, each hit tagged with ``meta.engine`` and the fusion numbers.

    ``calibration``: the session's per-engine score samples (``calibrated`` only; without
    one, each call estimates from its own responses)."""
    method, notes = config.method, []
    if method == "convex" and any(item.score_floor is None for item in lists):
        missing = sorted(item.engine for item in lists if item.score_floor is None)
        notes.append(f"convex fusion needs scoreFloor from every engine ({missing}); used rrf")
        method = "rrf"
    identity = DEDUP_KEYS[config.dedup]
    keys: dict[str, int] = {}
    candidates: list[_Candidate] = []
    ranked: dict[str, list[tuple[int, float]]] = {}
    calibrated: dict[str, list[float]] = {}
    if method == "calibrated":
        calibration = calibration or SessionCalibration()
    for item in lists:
        seen: set[int] = set()
        arm = ranked.setdefault(item.engine, [])
        values = (
            calibration.calibrate(item.engine, item.hits)
            if method == "calibrated" and calibration is not None
            else None
        )
        kept = calibrated.setdefault(item.engine, [])
        for rank, hit in enumerate(item.hits, 1):
            key = keys.setdefault(identity(hit), len(keys))
            if key in seen:
                continue  # an engine's own duplicate: its better-ranked copy counts
            seen.add(key)
            if key == len(candidates):
                candidates.append(_Candidate())
            candidates[key].sources.append((item.engine, rank, hit))
            arm.append((key, hit.score))
            if values is not None:
                kept.append(values[rank - 1])
    weights = {item.engine: config.weights.get(item.engine, item.weight) for item in lists}
    floors = {item.engine: item.score_floor for item in lists}
    inputs = _Inputs(config.rrf_k, floors, calibrated)
    scores = FUSION_STRATEGIES[method](ranked, weights, inputs)
    fused = [
        _fused_hit(candidates[key], score, weights, method == "calibrated")
        for key, score in scores.items()
        if candidates[key].sources
    ]
    fused.sort(key=lambda entry: (-entry[0], -entry[1], str(entry[2].id)))
    hits = [hit for _, _, hit in fused]
    return Fused(hits if k is None else hits[:k], method, notes)


def _fused_hit(
    candidate: _Candidate, score: float, weights: Mapping[str, float], calibrated: bool
) -> tuple[float, float, Hit]:
    sources = candidate.sources
    engine, rank, richest = max(sources, key=lambda source: (_richness(source[2]), -source[1]))
    meta: dict[str, Any] = {}
    for _, _, hit in sources:
        if hit is not richest and hit.meta:
            meta.update(hit.meta)
    meta.update(richest.meta or {})
    meta.update(engine=engine, engineRank=rank, engineScore=richest.score, fusedScore=score)
    if len(sources) > 1:
        meta["engines"] = [source[0] for source in sources]
    weight = sum(weights.get(source[0], 1.0) for source in sources)
    citation = richest.citation or attribution(engine, richest)
    if calibrated:
        # §7.7.2: the gateway's calibrated value is the confidence the caller can
        # threshold on (an engine's own claim only as far as calibration kept it).
        confidence = min(1.0, max(0.0, score / weight if weight > 0 else 0.0))
        fused_hit = msgspec.structs.replace(
            richest, score=score, meta=meta, confidence=round(confidence, 6), citation=citation
        )
        return score, weight, fused_hit
    return (
        score,
        weight,
        msgspec.structs.replace(richest, score=score, meta=meta, citation=citation),
    )


def attribution(engine: str, hit: Hit) -> Citation:
    """The citation of a hit its engine did not cite: the engine and its id for the hit.

    §6 ``citations``: every fused hit carries one, so a federation can advertise it
    whatever its engines do (issue 52: one uncited engine made a gateway L0). It
    claims only what the federation knows, where the hit came from; no ``uri``, so
    it never merges hits under ``dedup: "uri"``.
    """
    return Citation(source=f"{engine}:{hit.id}")


def _richness(hit: Hit) -> tuple[int, int]:
    """§16.3: the richest body is the one with the most content, then the longest text."""
    return (len(hit.content or []), len(hit.text or ""))
