"""Issue 35 item 5 through a real gateway: an engine claiming ``confidence`` 0.99 on every
hit no longer takes rank 1 over an rcpkit engine's relevant hit (calibrated fusion), and
one that never answers is dropped in time and named."""

from __future__ import annotations

import pytest

from rcpkit_bench.gateway_campaign import campaign


@pytest.mark.timeout(240)
async def test_a_constant_confidence_liar_and_a_silent_engine_do_not_win_or_hang() -> None:
    tally = await campaign("smoke", ["confident", "silent"])
    assert tally.notes == []
    assert tally.requests >= 12 and tally.slowest < 4.0
