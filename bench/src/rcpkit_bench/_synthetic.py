"""The synthetic corpus the engine benchmarks share: Zipf-distributed words, a ``bucket`` field."""

from __future__ import annotations

import random
import statistics
from pathlib import Path
from typing import Any

from rcpkit.engine.config import load_config
from rcpkit.engine.engine import Engine
from rcpkit.engine.ingest import SourceDocument
from rcpkit.engine.ingest.indexer import content_hash_of
from rcpkit.engine.open import open_engine

__all__ = ["_documents", "_engine", "_percentiles", "_texts"]

_VOCABULARY = [f"w{i}" for i in range(20_000)]
_WEIGHTS = [1 / (rank + 1) for rank in range(len(_VOCABULARY))]  # Zipf


def _texts(count: int, seed: int, words: int = 40) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(_VOCABULARY, _WEIGHTS, k=words)) for _ in range(count)]


def _documents(texts: list[str], first: int = 0) -> list[SourceDocument]:
    return [
        SourceDocument(
            id=f"d{i}",
            text=text,
            title=None,
            uri="",
            modality="text",
            meta={"bucket": i % 1000},
            pages=None,
            content_hash=content_hash_of(text, i, None),
        )
        for i, text in enumerate(texts, first)
    ]


def _engine(
    folder: Path, embedder: str, config_file: Path | None = None, **settings: Any
) -> Engine:
    fields = {"bucket": "int"}
    config = load_config(
        config_file, index=folder, embedder=embedder, filter_fields=fields, **settings
    )
    return open_engine(config)


def _percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94]
