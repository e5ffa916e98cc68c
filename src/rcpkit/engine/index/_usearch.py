"""The one way rcpkit loads usearch: after onnxruntime, when that is installed.

usearch's compiled module (2.26.x) carries its own static copy of the C++
runtime. Loaded first, it breaks onnxruntime's C++ runtime initialisation:
``import onnxruntime`` (and so every InferenceSession: the MiniLM embedder, a
cross-encoder) then dies with SIGSEGV inside libstdc++'s locale code. Loaded in
the other order both work, so onnxruntime goes first, every time.
"""

from __future__ import annotations

import contextlib
import importlib
from types import ModuleType

__all__ = ["import_usearch_index"]


def import_usearch_index() -> ModuleType:
    """``usearch.index``; ImportError when usearch is not installed."""
    with contextlib.suppress(ImportError):  # without onnxruntime there is nothing to protect
        importlib.import_module("onnxruntime")
    return importlib.import_module("usearch.index")
