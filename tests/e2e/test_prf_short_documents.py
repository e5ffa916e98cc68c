"""Issue 33: the default retrieve skips its feedback pass over titles and one-line documents.

RM3 over passages of a few words learns nothing but the words every top
document shares, and on the title-only man-page collection it cost 0.06 of
nDCG@10 ÷ BM25 (BENCHMARKS.md, "Quality that holds everywhere"). Through the
client over stdio: over one-liners the default retrieve is the one-pass hybrid
(the same fusion named explicitly, which never takes the pass); with
``prf_min_feedback_terms = 0`` the pass runs and the ranking changes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rcpkit.client import Client

ONE_LINERS = [
    "solar panel inverter for rooftop arrays", "solar water heater for homes",
    "wind turbine blade inspection drone", "wind farm output forecasting",
    "battery storage for solar and wind", "grid frequency regulation with batteries",
    "heat pump for cold climates", "geothermal heat pump drilling",
    "hydroelectric dam turbine maintenance", "tidal power turbine prototype",
    "solar cell efficiency record", "perovskite solar cell stability",
    "offshore wind cable laying", "home battery backup during outages",
    "electric car charging at home", "fast charging stations on highways",
]  # fmt: skip


def _serve(index: Path, config: Path) -> list[str]:
    return [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
            "--index", str(index), "--embedder", "hashing:64", "--create",
            "--config", str(config)]  # fmt: skip


async def _rankings(tmp_path: Path, setting: str) -> tuple[list[tuple[str, float]], ...]:
    config = tmp_path / f"{setting or 'default'}.toml"
    # The stages after the feedback pass off: this compares the passes alone.
    config.write_text(f"[engine]\nproximity_weight = 0\nsmoothing_weight = 0\n{setting}\n")
    index = tmp_path / f"idx-{len(setting)}"
    async with await Client.connect_stdio(_serve(index, config), connect_timeout=60) as client:
        await client.index_add([{"id": f"d{i}", "text": t} for i, t in enumerate(ONE_LINERS)])
        query = "solar energy for homes"
        default = await client.retrieve(query, k=10)
        one_pass = await client.retrieve(query, k=10, fusion={"method": "convex", "alpha": 0.85})
    return tuple([(str(h.id), round(h.score, 9)) for h in r.hits] for r in (default, one_pass))


async def test_one_liners_get_no_feedback_pass_by_default(tmp_path: Path) -> None:
    default, one_pass = await _rankings(tmp_path, "")
    assert default == one_pass


async def test_the_feedback_pass_runs_over_one_liners_when_the_floor_is_zero(
    tmp_path: Path,
) -> None:
    default, one_pass = await _rankings(tmp_path, "prf_min_feedback_terms = 0")
    assert default != one_pass
