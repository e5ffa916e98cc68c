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

Every process serving the store uses the same figures (issue 52: with worker
processes, a worker that first calibrated at 6 vectors and one that did at 11
gave the same hit different confidences). The figures are kept in the store,
one setting per tenant and size class (``2**k`` to ``2**(k+1) - 1`` vectors),
written by the first process to calibrate in that class and read by the others.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

__all__ = ["Calibration", "Settings", "TenantCalibrations", "setting_prefix"]

_PAIRS = 2000


class Settings(Protocol):
    """Where a store keeps its named settings (``Store.setting``, ``setting_default``)."""

    def setting(self, name: str) -> str | None: ...

    def setting_default(self, name: str, value: str) -> str: ...


def setting_prefix(tenant: str | None) -> str:
    """What the names of ``tenant``'s calibration settings start with (purged with it)."""
    return f"calibration\x1f{tenant or ''}\x1f"


def _size_class(size: int) -> int:
    """The doubling a collection of ``size`` vectors is in: 2**k..2**(k+1)-1 is class k."""
    return size.bit_length() - 1


class Calibration:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._size_class = -1
        self._mean = 0.1
        self._deviation = 0.1

    def stale(self, size: int) -> bool:
        """Whether a collection of ``size`` vectors is in another size class than the
        one calibrated (first use, a doubling, a halving)."""
        return size >= 2 and _size_class(size) != self._size_class

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
            self._size_class = _size_class(size)

    def figures(self) -> str:
        """The mean and deviation as a setting's text (exact: ``repr`` of each float)."""
        return f"{self._mean!r} {self._deviation!r}"

    def adopt(self, figures: str, size: int) -> None:
        """Use ``figures`` (another process's, from :meth:`figures`) for ``size``'s class."""
        mean, deviation = (float(part) for part in figures.split())
        with self._lock:
            self._mean, self._deviation = mean, deviation
            self._size_class = _size_class(size)

    def confidence(self, cosine: float) -> float:
        z = (cosine - self._mean - 2 * self._deviation) / self._deviation
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


class TenantCalibrations:
    """One :class:`Calibration` per tenant, each from that tenant's own vectors.

    ``settings``: the store, where the figures of each tenant and size class are
    agreed between processes (None: each process calibrates on its own).
    """

    def __init__(
        self,
        count: Callable[[str | None], int],
        sample: Callable[[str | None], npt.NDArray[np.float32]],
        settings: Settings | None = None,
    ) -> None:
        self._count = count
        self._sample = sample
        self._settings = settings
        self._lock = threading.Lock()
        self._tenants: dict[str, Calibration] = {}

    def of(self, tenant: str | None) -> Calibration:
        """``tenant``'s calibration, refreshed when its collection has grown (cheap else)."""
        with self._lock:
            calibration = self._tenants.setdefault(tenant or "", Calibration())
        size = self._count(tenant)
        if not calibration.stale(size):
            return calibration
        if self._settings is None:
            calibration.update(self._sample(tenant), size)
            return calibration
        name = f"{setting_prefix(tenant)}{_size_class(size)}"
        agreed = self._settings.setting(name)
        if agreed is None:  # the first process here: its figures become everyone's
            fresh = Calibration()
            fresh.update(self._sample(tenant), size)
            agreed = self._settings.setting_default(name, fresh.figures())
        calibration.adopt(agreed, size)
        return calibration
