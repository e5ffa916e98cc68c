"""The private PostgreSQL helper (``store/postgres/pgserver``): trials fast and said so,
crash and kill campaigns durable (issue 48 item 6)."""

from __future__ import annotations

import psycopg
import pytest
from pg_support import own_server

from rcpkit.engine.store.postgres.pgserver import TRIALS_ONLY, PostgresServer

_DURABILITY = ("fsync", "synchronous_commit", "full_page_writes")


def _shown(server: PostgresServer) -> dict[str, str]:
    with psycopg.connect(server.url()) as connection:
        return {
            name: str(connection.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            for name in _DURABILITY
        }


def test_a_durable_server_syncs_its_commits_and_stays_durable_across_a_restart(
    capfd: pytest.CaptureFixture[str],
) -> None:
    server = own_server(durable=True)
    try:
        assert _shown(server) == dict.fromkeys(_DURABILITY, "on")
        server.stop(remove=False)  # as a kill campaign brings it back: its own options
        server.start()
        assert _shown(server) == dict.fromkeys(_DURABILITY, "on")
    finally:
        server.stop()
    assert TRIALS_ONLY not in capfd.readouterr().err


def test_a_trial_server_says_on_stderr_that_it_runs_fsync_off(
    capfd: pytest.CaptureFixture[str],
) -> None:
    server = own_server()
    try:
        assert _shown(server) == dict.fromkeys(_DURABILITY, "off")
    finally:
        server.stop()
    said = [line for line in capfd.readouterr().err.splitlines() if "PostgreSQL" in line]
    assert said == [TRIALS_ONLY]
    assert "fsync off" in TRIALS_ONLY and "tests and trials" in TRIALS_ONLY
