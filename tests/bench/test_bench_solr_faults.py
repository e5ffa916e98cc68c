"""``rcpkit bench solr-faults``' audit: what counts as answered, and that a violation fails the run.

The campaign itself (a node killed under load) runs in tests/e2e/test_solr_faults.py.
"""

from __future__ import annotations

import pytest

from rcpkit.cli import main
from rcpkit_bench import command
from rcpkit_bench.report import Figure, Scale
from rcpkit_bench.solr_faults import VIOLATIONS, FaultAudit, figures


def _error(code: int, retryable: bool | None = None) -> dict[str, object]:
    data = {} if retryable is None else {"data": {"retryable": retryable}}
    return {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m", **data}}


def test_a_result_or_a_retryable_error_is_answered_and_everything_else_is_a_violation() -> None:
    audit = FaultAudit()
    assert audit.answered(({"jsonrpc": "2.0", "id": 1, "result": {"hits": []}}, ""), "r") == {
        "hits": []
    }
    for code in (-32010, -32011, -32014):  # §12.2: retried with backoff
        assert audit.answered((_error(code, True), ""), "r") is None
    assert (audit.retryable, audit.violations) == (3, 0)
    audit.answered((_error(-32603), ""), "r")
    audit.answered((_error(-32010, False), ""), "r")  # said not to be retryable
    audit.answered((_error(-32602), ""), "r")
    audit.answered((None, "hang"), "r")
    assert (audit.internal_errors, audit.other_errors, audit.unanswered) == (1, 2, 1)
    assert audit.requests == 8 and audit.violations == 4


@pytest.mark.parametrize("counter", VIOLATIONS)
def test_any_violation_makes_rcpkit_bench_exit_1(
    counter: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = FaultAudit(rounds=1)
    audit.fail(counter, f"one {counter}")

    def suite(*args: object, **options: object) -> object:
        def run(scale: Scale) -> list[Figure]:
            return figures(audit, seed=7, seconds=1.0)

        return run

    monkeypatch.setattr(command, "_suite", suite)
    assert main(["bench", "solr-faults", "--smoke"]) == 1
    assert "violations" in capsys.readouterr().out
    clean = FaultAudit(rounds=1)
    monkeypatch.setattr(command, "_suite", lambda *a, **o: lambda s: figures(clean, 7, 1.0))
    assert main(["bench", "solr-faults", "--smoke"]) == 0
