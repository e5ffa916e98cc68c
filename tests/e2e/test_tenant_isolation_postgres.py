"""Issue 35 item 3 on PostgreSQL: one tenant's writes change nothing another tenant sees.

The `tenants` campaign (rcpkit_bench.tenant_stats) against a real `rcpkit serve
--http --store URL` with two tenant-scoped tokens: scores, confidence, versions,
pins and cursors of tenant beta are what they were before tenant alpha wrote a
bulk and more one-document writes than the retention, and no error names a range
of versions. (The embedded store is the smoke run in tests/bench.)
"""

from __future__ import annotations

from pathlib import Path

from rcpkit_bench.tenant_stats import PLANS, run_campaign


def test_another_tenants_writes_are_invisible_on_postgres(
    postgres_url: str, tmp_path: Path
) -> None:
    audit = run_campaign(tmp_path, PLANS["smoke"], postgres_url)
    assert audit.comparisons >= 30
    assert audit.clean, audit.problems
