"""The checker against rcpkit's own engines (the CI gate of §14.5).

Each engine must pass every applicable check and certify exactly the level it
declares. (The checker once caught a request whose cancel arrived in the same
read never being answered; the cancel-in-flight check keeps it fixed.)
"""

from __future__ import annotations

import asyncio
import json

import pytest
from check_support import (
    KEYWORD,
    PASS_ENV,
    PATIENT,
    PYTHON,
    announced_http,
    build_index,
    failed,
    http_server_command,
    run_check,
)

from rcpkit.check import Report, check


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    """The keyword engine, the persistent engine and a gateway over both, checked at once."""
    folder = tmp_path_factory.mktemp("check-rcpkit")
    persistent = build_index(folder / "notes")
    registry = folder / "rcp.json"
    engines = [
        {"id": "samples", "transport": "stdio", "command": KEYWORD, "passEnv": [*PASS_ENV]},
        {"id": "notes", "transport": "stdio", "command": persistent, "passEnv": [*PASS_ENV]},
    ]
    registry.write_text(json.dumps({"engines": engines}))
    gateway = [PYTHON, "-m", "rcpkit", "gateway", str(registry)]

    async def all_three() -> list[Report]:
        return await asyncio.gather(
            check(command=KEYWORD, timeout=PATIENT, pass_env=PASS_ENV),
            check(
                command=persistent,
                query="reciprocal rank fusion",
                timeout=PATIENT,
                pass_env=PASS_ENV,
            ),
            check(command=gateway, query="rank fusion", timeout=PATIENT, pass_env=PASS_ENV),
        )

    keyword, notes, federated = asyncio.run(all_three())
    return {"keyword": keyword, "persistent": notes, "gateway": federated}


@pytest.fixture
def keyword_report(reports: dict[str, Report]) -> Report:
    return reports["keyword"]


@pytest.fixture
def persistent_report(reports: dict[str, Report]) -> Report:
    return reports["persistent"]


def test_the_keyword_engine_meets_every_applicable_must(keyword_report: Report) -> None:
    assert failed(keyword_report) == set()
    assert keyword_report.declared == "L0"
    unmet = {r.title for r in keyword_report.requirements if not r.met}
    assert "advertises filter" in unmet  # an honest L0: L1 needs more than sparse


def test_the_keyword_engine_certifies_l0_consistently(keyword_report: Report) -> None:
    assert keyword_report.certified == "L0" and keyword_report.honest


def test_the_persistent_engine_meets_every_applicable_must(persistent_report: Report) -> None:
    assert failed(persistent_report) == set()
    assert persistent_report.declared == "L2"
    assert all(requirement.met for requirement in persistent_report.requirements)
    passed = {o.id for o in persistent_report.outcomes if o.status == "PASS"}
    assert {"retrieve-dense", "retrieve-hybrid", "filter-applied", "snapshots"} <= passed


def test_the_persistent_engine_certifies_its_declared_l2(persistent_report: Report) -> None:
    assert persistent_report.certified == "L2" and persistent_report.honest


def test_the_keyword_engine_over_http_certifies_l0_consistently() -> None:
    with announced_http(http_server_command("--engine", "keyword", "--sample")) as (url, _):
        report = run_check(url=url, timeout=PATIENT)
    assert report.transport == "http"
    assert failed(report) == set(), [o for o in report.outcomes if o.status == "FAIL"]
    assert report.certified == "L0" and report.honest and report.passed


def test_the_gateway_over_both_engines_declares_only_what_it_proves(
    reports: dict[str, Report],
) -> None:
    report = reports["gateway"]
    assert failed(report) == set()
    # L2: besides retrieve it forwards rerank, transform, multi-vector and graph-free
    # pagination (its own signed cursors) — all of which the checker exercises.
    assert report.declared == "L2"
    assert report.certified == "L2"
    assert all(requirement.met for requirement in report.requirements)
