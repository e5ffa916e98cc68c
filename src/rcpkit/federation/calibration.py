"""Per-engine calibration for score-aware fusion across engines (§16.3, §6.1, §7.7.2).

§6.1: cross-server fusion MUST use ranks, the normalised ``confidence`` field,
or a convex combination over declared floors - never raw scores. RRF uses
ranks only, so it interleaves engines whatever their relevance: an engine
with nothing relevant still puts its best hit near the top. Calibrated
fusion instead puts every hit on one probability-like scale:

- a hit that carries ``confidence`` (an engine advertising
  ``retrieve.confidence``, §7.7.2) keeps it;
- a hit that does not (a foreign engine) gets the gateway's estimate from
  that engine's own scores over the session. Most of the hits an engine
  returns are not relevant, so the running sample of everything it has
  returned stands for "what its unrelated text scores"; a score ``s`` maps to
  ``σ((s − μ − 2·sd) / sd)`` (σ the logistic), the rule rcpkit engines use
  for their own ``confidence`` with random chunk pairs as the background
  (``rcpkit.engine.store.calibration``): two deviations above the background
  is 0.5. The sample includes the response being calibrated, so the first
  query has one too.

The values are then made non-increasing along the engine's own ranking
(pool-adjacent-violators, a least-squares isotonic fit): the engine's order
is kept - its ranker saw more than the calibration does - and only its
level is calibrated. Fused: ``Σ weight · p``, ties by rank.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Sequence
from statistics import fmean, pstdev

from rcpkit.protocol.content import Hit

__all__ = ["SessionCalibration", "non_increasing"]

_SAMPLE = 4096  # scores kept per engine (the most recent)
_OFFSET = 2.0  # deviations above the background that calibrate to 0.5


class SessionCalibration:
    """The gateway's running per-engine score samples; thread-safe, one per federation."""

    def __init__(self, sample: int = _SAMPLE) -> None:
        self._sample = sample
        self._scores: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def observed(self, engine: str) -> int:
        with self._lock:
            return len(self._scores.get(engine, ()))

    def calibrate(self, engine: str, hits: Sequence[Hit]) -> list[float]:
        """Each hit's calibrated relevance in [0, 1], non-increasing down the list."""
        estimated = [hit.confidence is None for hit in hits]
        background: tuple[float, float] | None = None
        if any(estimated):
            background = self._observe(engine, [hit.score for hit in hits])
        values: list[float] = []
        for hit, estimate in zip(hits, estimated, strict=True):
            if not estimate:
                assert hit.confidence is not None
                values.append(float(hit.confidence))
            else:
                assert background is not None
                values.append(_logistic(hit.score, *background))
        return non_increasing(values)

    def _observe(self, engine: str, scores: list[float]) -> tuple[float, float]:
        finite = [score for score in scores if math.isfinite(score)]
        with self._lock:
            sample = self._scores.setdefault(engine, deque(maxlen=self._sample))
            sample.extend(finite)
            values = list(sample)
        if not values:
            return 0.0, 0.0
        mean = fmean(values)
        return mean, pstdev(values) if len(values) > 1 else 0.0


def _logistic(score: float, mean: float, deviation: float) -> float:
    if not math.isfinite(score):
        return 0.0
    if deviation <= 1e-12 * max(1.0, abs(mean)):
        # Every score alike so far: nothing stands out of the background, so nothing
        # is evidence of relevance (a score above a constant background is, fully).
        return 1.0 if score > mean else 0.0
    z = (score - mean - _OFFSET * deviation) / deviation
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def non_increasing(values: Sequence[float]) -> list[float]:
    """The least-squares non-increasing fit of ``values`` (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, count]
    for value in values:
        blocks.append([value, 1.0])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            value_b, count_b = blocks.pop()
            value_a, count_a = blocks[-1]
            total = count_a + count_b
            blocks[-1] = [(value_a * count_a + value_b * count_b) / total, total]
    fitted: list[float] = []
    for value, count in blocks:
        fitted.extend([value] * int(count))
    return fitted
