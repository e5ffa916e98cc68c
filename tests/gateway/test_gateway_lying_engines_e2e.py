"""Issue 35 item 5 through a real gateway: an engine claiming ``confidence`` 0.99 on every
hit no longer takes rank 1 over an rcpkit engine's relevant hit (calibrated fusion), and
one that never answers is dropped in time and named."""

from __future__ import annotations

import pytest

from rcpkit_bench.gateway_campaign import campaign


@pytest.mark.timeout(240)
async def test_a_constant_confidence_liar_and_a_silent_engine_do_not_win_or_hang() -> None:
    tally = await campaign("smoke", ["confident", "silent"])
    # Not the campaign's "hangs" (an answer later than its 4 s deadline plus 1 s) nor
    # its slowest answer: speed figures a loaded machine misses with nothing wrong
    # (issue 52). The silent engine is dropped by the gateway's timer and named, or
    # the answer counts as wrong; a real hang is wrong too (the client gives up).
    misses = (tally.crashes, tally.internal, tally.wrong, tally.leaks)
    assert misses == (0, 0, 0, 0), tally.notes
    assert tally.requests >= 12
