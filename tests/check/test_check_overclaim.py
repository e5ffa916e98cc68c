"""The checker against an independent raw server: honest, overclaiming, and buggy."""

from __future__ import annotations

import pytest
from check_support import PATIENT, RAW_SERVER, check_cli, failed, json_report, run_check


def test_an_honest_minimal_server_certifies_l0_and_the_cli_exits_zero() -> None:
    # Every probe must pass, so none may race the short timeout (check_support.TIMEOUT).
    code, output = check_cli("--", *RAW_SERVER, "--declare", "L0", timeout=PATIENT)
    assert code == 0, output
    assert "CERTIFIED LEVEL: L0" in output
    assert "declared _meta.conformance='L0' — consistent" in output
    assert "[L0] PASS  info answers before initialize" in output


def test_a_server_declaring_more_than_it_does_is_an_overclaim_and_fails() -> None:
    code, output = check_cli("--json", "--", *RAW_SERVER, "--declare", "L2", timeout=PATIENT)
    assert code == 1
    report = json_report(output)
    assert report["certifiedLevel"] == "L0"
    assert report["declaredLevel"] == "L2"
    assert report["declarationHonest"] is False
    assert report["summary"]["fail"] == 0  # no single check failed: the claim is the lie
    assert {check["status"] for check in report["checks"]} <= {"PASS", "SKIP"}


@pytest.mark.parametrize(
    ("bug", "caught"),
    [
        ("notify", {"notifications-unanswered", "cancel-unknown", "batch-correlated"}),
        ("id-type", {"ids-echoed"}),
    ],
)
def test_a_broken_must_is_caught_by_its_check(bug: str, caught: set[str]) -> None:
    report = run_check([*RAW_SERVER, "--bug", bug])
    assert caught <= failed(report)
    assert report.certified is None and not report.passed


def test_a_server_that_silently_repairs_the_funnel_fails_the_funnel_check_at_l1() -> None:
    report = run_check([*RAW_SERVER, "--bug", "funnel"], timeout=PATIENT)  # it answers all
    assert failed(report) == {"funnel"}
    assert report.certified == "L0" and not report.passed


def test_usage_errors_exit_two() -> None:
    assert check_cli()[0] == 2
    assert check_cli("--http", "http://127.0.0.1:9/rcp", "--", "x")[0] == 2
