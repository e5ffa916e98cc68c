"""Fixtures for engine tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Any]:
    from engine_support import make_engine  # imported lazily: the models tests need none of it

    engine = make_engine(tmp_path / "index")
    yield engine
    engine.close()
