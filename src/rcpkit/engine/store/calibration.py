"""Per-hit confidence in [0, 1], comparable across calls (§7.7.2).

Method: the hit's dense cosine to the query is compared with what unrelated
text scores in this corpus. At first use (and when the collection doubles)
we sample random chunk pairs, take the mean μ and deviation σ of their
cosine, and map a hit's cosine c to σ((c − μ − 2σ) / σ) (σ() the logistic):
a hit two deviations above chance is 0.5. It depends only on the hit, the
query and corpus constants, never on the other hits of the response.

The corpus is the caller's tenant's (§15.6, :class:`TenantCalibrations`): a
calibration shared by every tenant would let one tenant's writes move the
confidence another tenant sees for the same query (issue 35).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["Calibration", "TenantCalibrations"]

_PAIRS = 2000


class Calibration:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._size = 0
        self._mean = 0.1
        self._deviation = 0.1

    def stale(self, size: int) -> bool:
        """Whether a collection of ``size`` vectors warrants recalibrating (first use, doubling)."""
        return size >= 2 and (not self._size or size >= 2 * self._size)

    def update(self, matrix: npt.NDArray[np.float32], size: int | None = None) -> None:
        """Recalibrate from a corpus matrix (or a sample of a ``size``-vector corpus)."""
        size = len(matrix) if size is None else size
        if not self.stale(size) or len(matrix) < 2:
            return
        with self._lock:
            rng = np.random.default_rng(0)  # fixed: calibration must be reproducible
            left = rng.integers(0, len(matrix), _PAIRS)
            right = rng.integers(0, len(matrix), _PAIRS)
            keep = left != right
            cosines = np.einsum("ij,ij->i", matrix[left[keep]], matrix[right[keep]])
            self._mean = float(cosines.mean())
            self._deviation = max(float(cosines.std()), 1e-3)
            self._size = size

    def confidence(self, cosine: float) -> float:
        z = (cosine - self._mean - 2 * self._deviation) / self._deviation
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


class TenantCalibrations:
    """One :class:`Calibration` per tenant, each from that tenant's own vectors."""

    def __init__(
        self,
        count: Callable[[str | None], int],
        sample: Callable[[str | None], npt.NDArray[np.float32]],
    ) -> None:
        self._count = count
        self._sample = sample
        self._lock = threading.Lock()
        self._tenants: dict[str, Calibration] = {}

    def of(self, tenant: str | None) -> Calibration:
        """``tenant``'s calibration, refreshed when its collection has grown (cheap else)."""
        with self._lock:
            calibration = self._tenants.setdefault(tenant or "", Calibration())
        size = self._count(tenant)
        if calibration.stale(size):
            calibration.update(self._sample(tenant), size)
        return calibration
