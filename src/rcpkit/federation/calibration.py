"""Per-engine calibration for score-aware fusion across engines (§16.3, §6.1, §7.7.2).

§6.1: cross-server fusion MUST use ranks, the normalised ``confidence`` field,
or a convex combination over declared floors - never raw scores. RRF uses
ranks only, so it interleaves engines whatever their relevance: an engine
with nothing relevant still puts its best hit near the top. Calibrated
fusion instead puts every hit on one probability-like scale:

- a hit that carries ``confidence`` (an engine advertising
  ``retrieve.confidence``, §7.7.2) keeps it while the engine's claims carry
  information: once an engine has sent ``_CLAIMS`` of them, claims that hardly
  vary (an engine saying 0.99 on every hit, issue 35) are worth no more than the
  gateway's own estimate below, and the hit gets the smaller of the two — a
  claim can lower a hit, never lift it past what the engine's scores show;
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
_CLAIMS = 5  # claimed confidences seen before their spread is judged
# Claims whose standard deviation over the session is below this say nothing: an
# honest engine's confidence separates its relevant hits from the rest.
_MIN_SPREAD = 0.05


class SessionCalibration:
    """The gateway's running per-engine score samples; thread-safe, one per federation."""

    def __init__(self, sample: int = _SAMPLE) -> None:
        self._sample = sample
        self._scores: dict[str, deque[float]] = {}
        self._claims: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def observed(self, engine: str) -> int:
        with self._lock:
            return len(self._scores.get(engine, ()))

    def trusted(self, engine: str) -> bool:
        """Whether the engine's own ``confidence`` values carry information so far."""
        with self._lock:
            claims = list(self._claims.get(engine, ()))
        return len(claims) < _CLAIMS or pstdev(claims) >= _MIN_SPREAD

    def calibrate(self, engine: str, hits: Sequence[Hit]) -> list[float]:
        """Each hit's calibrated relevance in [0, 1], non-increasing down the list."""
        background = self._observe(engine, [hit.score for hit in hits])
        claims = [float(hit.confidence) for hit in hits if hit.confidence is not None]
        if claims:
            self._record(self._claims, engine, claims)
        trusted = self.trusted(engine)
        values: list[float] = []
        for hit in hits:
            estimate = _logistic(hit.score, *background)
            if hit.confidence is None:
                values.append(estimate)
            elif trusted:
                values.append(float(hit.confidence))
            else:
                values.append(min(float(hit.confidence), estimate))
        return non_increasing(values)

    def _record(self, store: dict[str, deque[float]], engine: str, values: list[float]) -> None:
        finite = [value for value in values if math.isfinite(value)]
        with self._lock:
            store.setdefault(engine, deque(maxlen=self._sample)).extend(finite)

    def _observe(self, engine: str, scores: list[float]) -> tuple[float, float]:
        self._record(self._scores, engine, scores)
        with self._lock:
            values = list(self._scores.get(engine, ()))
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
