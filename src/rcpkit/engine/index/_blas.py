"""Query-time BLAS runs on one thread per call (unless ``OPENBLAS_NUM_THREADS`` says otherwise).

A dense search is one matrix-vector product: memory-bound, so OpenBLAS's
threads add nothing but hand-offs, and on a loaded machine (more runnable
threads than cores, as a server under concurrent requests is) those hand-offs
made a 2,000 x 384 product 6-18x slower (measured: 3.6 ms against 0.2 ms).
Concurrency comes from requests running in parallel instead.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from pathlib import Path

__all__ = ["single_threaded_blas"]

_SETTERS = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


@cache
def single_threaded_blas() -> bool:
    """Limit the OpenBLAS that numpy loaded to one thread; False when none was found."""
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return False
    import numpy  # noqa: F401  (loads its BLAS)

    try:
        maps = Path("/proc/self/maps").read_text().split()
    except OSError:
        return False
    for path in {item for item in maps if "openblas" in item and item.startswith("/")}:
        library = ctypes.CDLL(path)
        for name in _SETTERS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(1)
                return True
    return False
