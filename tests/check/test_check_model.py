"""How outcomes and requirements become a certified level and a verdict (§14.5)."""

from __future__ import annotations

from rcpkit.check import Outcome, Report, Requirement, render_text, requirements


def _report(*outcomes: tuple[str, str], declared: str | None = "L1", unmet: str = "") -> Report:
    report = Report("server", "stdio", declared=declared)
    report.outcomes = [
        Outcome(f"c{n}", level, "t", "§x", status) for n, (level, status) in enumerate(outcomes)
    ]  # type: ignore[arg-type]
    report.requirements = [Requirement(level, "needs", level != unmet) for level in ("L1", "L2")]
    return report


def test_a_level_is_certified_when_it_and_every_lower_level_pass() -> None:
    report = _report(("L0", "PASS"), ("L1", "PASS"), ("L2", "SKIP"))
    assert report.certified == "L2"
    assert _report(("L0", "PASS"), ("L1", "PASS"), unmet="L2").certified == "L1"


def test_a_failure_at_a_level_caps_certification_below_it() -> None:
    assert _report(("L0", "PASS"), ("L1", "FAIL"), ("L2", "PASS")).certified == "L0"
    assert _report(("L0", "FAIL"), ("L1", "PASS")).certified is None


def test_declaring_above_the_certified_level_is_an_overclaim_and_fails() -> None:
    honest = _report(("L0", "PASS"), declared="L0", unmet="L1")
    assert honest.honest and honest.passed
    overclaim = _report(("L0", "PASS"), declared="L2", unmet="L1")
    assert not overclaim.honest and not overclaim.passed
    assert "declared _meta.conformance='L2' — OVERCLAIM" in render_text(overclaim)
    assert "CERTIFIED LEVEL: L0" in render_text(overclaim)


def test_an_underclaim_is_honest_and_a_missing_declaration_is_not() -> None:
    assert _report(("L0", "PASS"), ("L1", "PASS"), declared="L0").honest
    assert not _report(("L0", "PASS"), declared=None).honest


def test_any_failed_must_fails_the_run_even_when_the_declaration_is_honest() -> None:
    report = _report(("L0", "PASS"), ("L2", "FAIL"), declared="L0")
    assert report.honest and not report.passed


def test_level_requirements_follow_sections_14_2_and_14_3() -> None:
    l1 = {
        "retrieve": {"modes": ["dense", "sparse", "hybrid"], "deterministic": True},
        "filter": {"fields": ["a"]},
        "citations": {},
    }
    met = {(r.level, r.met) for r in requirements(l1)}
    assert met == {("L1", True), ("L2", False)}
    sota = {**l1, "rerank": {"methods": ["colbert"]}, "streaming": {}}
    assert all(requirement.met for requirement in requirements(sota))
    assert not any(requirement.met for requirement in requirements({"embed": {}}))
