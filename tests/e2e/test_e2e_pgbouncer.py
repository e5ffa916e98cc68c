"""Through pgbouncer in transaction mode (Debian's pgbouncer; skipped when not installed)."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from engine_support import Calls, make_engine, serving

_BINARY = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def bouncer_url(postgres_url: str) -> Iterator[str]:
    if not os.path.exists(_BINARY):
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")
    upstream = postgres_url.rsplit("@", 1)[1]  # 127.0.0.1:PORT/DB
    host_port, database = upstream.split("/")
    port = _port()
    folder = Path(tempfile.mkdtemp(prefix="rcpkit-pgbouncer-"))
    (folder / "users.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(
        f"[databases]\n{database} = host=127.0.0.1 port={host_port.split(':')[1]}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {folder / 'users.txt'}\npool_mode = transaction\n"
        "default_pool_size = 8\n"
    )
    command = [_BINARY, str(folder / "pgbouncer.ini")]
    user = None
    if os.geteuid() == 0:  # pgbouncer refuses to run as root
        user = "postgres"
        pwd.getpwnam(user)
        shutil.chown(folder, user)
        for name in ("users.txt", "pgbouncer.ini"):
            shutil.chown(folder / name, user)
    process = subprocess.Popen(
        command, user=user, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/{database}"
    try:
        deadline = time.monotonic() + 60  # only catches a hang: a loaded machine is slow
        while True:  # bounded: until it accepts connections
            try:
                psycopg.connect(url, connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                assert process.poll() is None and time.monotonic() < deadline, "no pgbouncer"
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()
        shutil.rmtree(folder, ignore_errors=True)


def _interleaved(url: str, prepare_threshold: int | None) -> None:
    """A prepared query, then another client takes its server connection, then the query."""
    with (
        psycopg.connect(url, autocommit=True, prepare_threshold=prepare_threshold) as mine,
        psycopg.connect(url, autocommit=True) as other,
    ):
        for _ in range(6):  # psycopg prepares a query from its 5th run by default
            mine.execute("SELECT count(*) FROM pg_class WHERE relpages > %s", (0,))
        with other.transaction():  # idle server connections are reused last-in, first-out
            other.execute("SELECT 1")
            mine.execute("SELECT count(*) FROM pg_class WHERE relpages > %s", (0,))


def test_prepared_statements_break_in_transaction_mode_unless_disabled(bouncer_url: str) -> None:
    with pytest.raises(psycopg.errors.InvalidSqlStatementName):
        _interleaved(bouncer_url, 5)
    _interleaved(bouncer_url, None)  # what postgres_prepared_statements = false sets


async def test_an_engine_through_pgbouncer_serves_writes_reads_and_state(
    bouncer_url: str, tmp_path: Path
) -> None:
    engine = make_engine(tmp_path / "local", store=bouncer_url, postgres_prepared_statements=False)
    async with serving(engine) as a, serving(engine) as b:
        one, two = Calls(a), Calls(b)
        await one.result("index/add", {"documents": [{"id": "d", "text": "bouncing lantern"}]})
        for round in range(8):  # past psycopg's prepare threshold, on two sessions
            for call in (one, two):
                query = {"query": "lantern", "k": 1, "mode": ("sparse", "dense")[round % 2]}
                assert (await call.result("retrieve", query))["hits"], round
        await two.result("feedback", {"signals": [{"hitId": "d#0", "used": True}]})
        pinned = await one.result("retrieve", {"query": "lantern", "indexVersion": "1"})
        assert pinned["indexVersion"] == "1"
    engine.close()
