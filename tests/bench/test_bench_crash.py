"""The crash campaign (``rcpkit bench crash``): a few real kill -9s, and audits that can fail."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from rcpkit_bench import crash


def test_a_campaign_starts_its_first_server_on_a_fresh_index(tmp_path: Path) -> None:
    # serve refuses a missing index unless --create: the campaign's first server must pass it
    campaign = crash._Campaign(tmp_path / "index", random.Random(1), crash.CrashAudit())
    with (tmp_path / "log").open("wb") as log:
        crash._open(campaign, log).shutdown()
    assert (campaign.index / "index.sqlite3").is_file()


def test_a_server_that_exits_before_replying_fails_the_call_at_once(tmp_path: Path) -> None:
    # no --create on a missing index: the server exits; the call says so, without a timeout
    with (tmp_path / "log").open("wb") as log:
        server = crash._Server(tmp_path / "missing", log)
        with pytest.raises(RuntimeError, match="exited"):
            server.reply(server.send("initialize", {"protocolVersion": 1}), timeout=30)
        server.kill()


def _campaign_after_one_round(folder: Path) -> crash._Campaign:
    campaign = crash._Campaign(folder / "index", random.Random(7), crash.CrashAudit())
    with (folder / "log").open("wb") as log:
        server = crash._open(campaign, log)
        crash._round(campaign, server, settle=True)
    assert campaign.acknowledged and not campaign.unanswered
    return campaign


def _execute(campaign: crash._Campaign, sql: str, *params: object) -> None:
    with closing(sqlite3.connect(campaign.index / "index.sqlite3")) as connection, connection:
        connection.execute(sql, params)


def test_the_audit_counts_an_acknowledged_document_that_went_missing(tmp_path: Path) -> None:
    campaign = _campaign_after_one_round(tmp_path)
    gone = campaign.acknowledged[0].ids[0]
    _execute(campaign, "UPDATE documents SET removed = 1 WHERE doc_id = ?", gone)
    crash._audit_store(campaign)
    assert campaign.audit.lost == 1
    assert not campaign.audit.clean


def test_the_audit_counts_a_batch_that_is_only_partly_there(tmp_path: Path) -> None:
    campaign = _campaign_after_one_round(tmp_path)
    batch = max(campaign.acknowledged, key=lambda batch: len(batch.ids))
    campaign.acknowledged.remove(batch)
    campaign.unanswered.append(batch)  # as if its answer had been lost in the crash
    if len(batch.ids) == 1:
        batch.documents.append({"id": "never-written", "text": "x"})
    _execute(campaign, "UPDATE documents SET removed = 1 WHERE doc_id = ?", batch.ids[0])
    crash._audit_store(campaign)
    assert campaign.audit.partial_batches >= 1


def test_the_audit_counts_a_corrupt_vector(tmp_path: Path) -> None:
    campaign = _campaign_after_one_round(tmp_path)
    _execute(campaign, "UPDATE chunks SET vector = ? WHERE key = 1", b"\x00" * 12)
    crash._audit_store(campaign)
    assert campaign.audit.dense_mismatches == 1


@pytest.mark.heavy  # 4 real servers killed and restarted: past 60 s under load
def test_bench_crash_smoke_kills_real_servers_and_finds_nothing_wrong(tmp_path: Path) -> None:
    # The smoke variant of the campaign: 4 kill -9s of real `rcpkit serve` subprocesses.
    out = tmp_path / "crash.json"
    done = subprocess.run(
        [sys.executable, "-m", "rcpkit", "bench", "crash", "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=840,  # under the heavy budget: a hang fails here, with stderr
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = {row["name"]: row["value"] for row in json.loads(out.read_text())["figures"]}
    assert figures.pop("kill -9 during index/add batches") == 4
    assert len(figures) == 7
    assert all(value == 0 for value in figures.values()), (figures, done.stderr)
