"""Calibrated (score-aware) fusion across engines (§16.3, §6.1, §7.7.2)."""

from __future__ import annotations

import pytest

from rcpkit.federation import EngineHits, FusionConfig, fuse_hits
from rcpkit.federation.calibration import SessionCalibration, non_increasing
from rcpkit.protocol.content import Hit

CALIBRATED = FusionConfig(method="calibrated")


def _confident(*pairs: tuple[str, float]) -> list[Hit]:
    """Hits best first, each with its engine's confidence (score is rank-like, unused)."""
    return [Hit(id=i, score=1.0 / n, confidence=c) for n, (i, c) in enumerate(pairs, 1)]


def test_the_isotonic_fit_pools_a_rise_and_keeps_a_fall() -> None:
    assert non_increasing([0.9, 0.2, 0.5, 0.1]) == pytest.approx([0.9, 0.35, 0.35, 0.1])
    assert non_increasing([0.1, 0.2, 0.3]) == pytest.approx([0.2, 0.2, 0.2])
    assert non_increasing([]) == []


def test_an_engine_with_nothing_relevant_no_longer_takes_a_top_slot() -> None:
    # RRF gives both first hits 1/61 and the id tie-break puts "a-babel" first.
    lists = [
        EngineHits("books", _confident(("a-babel", 0.08), ("a-emma", 0.01))),
        EngineHits("landmarks", _confident(("eiffel", 0.97), ("big-ben", 0.30))),
    ]
    assert fuse_hits(lists, 2, FusionConfig()).hits[0].id == "a-babel"
    fused = fuse_hits(lists, 2, CALIBRATED)
    assert [h.id for h in fused.hits] == ["eiffel", "big-ben"]
    assert fused.method == "calibrated"


def test_an_engines_own_order_is_kept_even_when_its_confidences_disagree() -> None:
    lists = [EngineHits("hybrid", _confident(("first", 0.4), ("second", 0.6), ("third", 0.1)))]
    assert [h.id for h in fuse_hits(lists, None, CALIBRATED).hits] == ["first", "second", "third"]


def test_weights_scale_the_calibrated_values() -> None:
    lists = [
        EngineHits("a", _confident(("x", 0.5))),
        EngineHits("b", _confident(("y", 0.4)), weight=2.0),
    ]
    assert [h.id for h in fuse_hits(lists, None, CALIBRATED).hits] == ["y", "x"]


def test_a_foreign_engines_scores_are_calibrated_against_its_session_background() -> None:
    calibration = SessionCalibration()
    # Forty queries where nothing stands out: scores around 0.2 +- 0.05.
    for n in range(40):
        noise = [0.2 + 0.05 * ((n + j) % 3 - 1) for j in range(3)]
        values = calibration.calibrate("web", [Hit(id=j, score=s) for j, s in enumerate(noise)])
        assert max(values) < 0.5  # typical hits are not confident
    standout = calibration.calibrate("web", [Hit(id="hit", score=0.9), Hit(id="x", score=0.2)])
    assert standout[0] > 0.99 and standout[1] < 0.5
    assert calibration.observed("web") == 40 * 3 + 2


def test_a_constant_foreign_engine_gives_no_evidence_and_mixed_hits_keep_theirs() -> None:
    calibration = SessionCalibration()
    assert calibration.calibrate("flat", [Hit(id=1, score=0.0), Hit(id=2, score=0.0)]) == [0, 0]
    mixed = [Hit(id=1, score=3.0, confidence=0.7), Hit(id=2, score=2.0)]
    assert calibration.calibrate("mixed", mixed)[0] == pytest.approx(0.7)


def test_the_gateway_estimate_becomes_the_fused_hits_confidence() -> None:
    lists = [EngineHits("foreign", [Hit(id="a", score=5.0), Hit(id="b", score=1.0)])]
    fused = fuse_hits(lists, None, CALIBRATED, SessionCalibration())
    assert all(hit.confidence is not None and 0 <= hit.confidence <= 1 for hit in fused.hits)
    assert fused.hits[0].confidence is not None and fused.hits[1].confidence is not None
    assert fused.hits[0].confidence >= fused.hits[1].confidence


def test_an_engine_claiming_099_on_every_hit_no_longer_takes_rank_1() -> None:
    # Issue 35 item 5: a liar's constant confidence carries no information, so its
    # hits are worth what its scores show against its own session background.
    calibration = SessionCalibration()
    liar = [Hit(id=f"spam-{n}", score=1.0 - n / 100, confidence=0.99) for n in range(6)]
    honest = _confident(("eiffel", 0.91), ("big-ben", 0.2), ("colosseum", 0.1))
    lists = [EngineHits("liar", liar), EngineHits("landmarks", honest)]
    fused = fuse_hits(lists, 3, CALIBRATED, calibration)
    assert fused.hits[0].id == "eiffel"
    assert all(hit.confidence is not None and hit.confidence < 0.9 for hit in fused.hits[1:])
    assert not calibration.trusted("liar") and calibration.trusted("landmarks")


def test_a_claim_can_lower_a_hit_but_never_lift_it_past_its_scores() -> None:
    calibration = SessionCalibration()
    flat = [Hit(id=n, score=0.5, confidence=0.99) for n in range(6)]
    assert calibration.calibrate("flat", flat) == [0.0] * 6  # nothing stands out
    low = [Hit(id=n, score=float(10 - n), confidence=0.01) for n in range(6)]
    assert max(calibration.calibrate("low", low)) <= 0.01 + 1e-9
