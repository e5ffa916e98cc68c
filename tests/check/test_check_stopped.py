"""``rcpkit check`` against servers that cannot be checked: it says why, with their stderr."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from check_support import PATIENT, PYTHON, TIMEOUT, build_index, check_cli, json_report


def _check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        [PYTHON, "-m", "rcpkit", "check", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=180,
        env=env,
    )
    return done.returncode, done.stdout.decode()


def test_rcpkit_serve_under_check_opens_the_exported_rcpkit_index(tmp_path: Path) -> None:
    # The README's `rcpkit check -- rcpkit serve` with the index in $RCPKIT_INDEX.
    serve = build_index(tmp_path)
    index, embedder = serve[serve.index("--index") + 1], serve[serve.index("--embedder") + 1]
    env = {**os.environ, "RCPKIT_INDEX": index, "RCPKIT_EMBEDDER": embedder}
    env["XDG_DATA_HOME"] = str(tmp_path / "no-default-index-here")
    code, output = _check(
        "--timeout", str(PATIENT), "--query", "reciprocal rank fusion", "--",
        PYTHON, "-m", "rcpkit", "serve", "--stdio", env=env,
    )  # fmt: skip
    assert code == 0, output
    assert "CERTIFIED LEVEL: L2" in output and " 0 failed" in output


def test_a_server_that_exits_at_start_is_reported_with_its_stderr_not_as_failed_checks(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-index"
    # The server's exit ends the first ping's wait, whenever its start gets that far
    # (issue 52: a 2 s ping lost that race on a loaded machine).
    code, output = check_cli(
        "--", PYTHON, "-m", "rcpkit", "serve", "--stdio", "--index", str(missing), timeout=PATIENT
    )
    assert code == 1, output
    assert (
        "STOPPED: no answer to a first ping: the server closed its output and exited with code 2"
        in output
    )
    assert "the server's stderr ended with:" in output
    assert f"rcpkit: no index at {missing}" in output  # the server's own words
    assert "FAIL" not in output and "failed" not in output and "MISSING" not in output


def test_the_json_report_of_a_server_gone_at_start_has_the_reason_and_stderr(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-index"
    command = ["--json", "--", PYTHON, "-m", "rcpkit", "serve", "--stdio", "--index", str(missing)]
    code, output = check_cli(*command, timeout=PATIENT)
    report = json_report(output)
    assert code == 1 and report["passed"] is False
    assert report["checks"] == [] and report["certifiedLevel"] is None
    assert "exited with code 2" in report["stopped"]
    assert any(f"no index at {missing}" in line for line in report["stderrTail"])


REFUSES_INITIALIZE = """\
import json, sys
info = {"protocolVersion": 1, "server": {"name": "refuser", "version": "1"},
        "capabilities": {"retrieve": {"maxK": 5, "modes": ["sparse"]}},
        "_meta": {"conformance": "L0"}}
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    method = request.get("method")
    if method == "initialize":
        print("refuser: initialize refused: no licence file", file=sys.stderr, flush=True)
        reply = {"error": {"code": -32603, "message": "no licence file"}}
    elif method == "ping":
        reply = {"result": {"nonce": (request.get("params") or {}).get("nonce")}}
    elif method == "info":
        reply = {"result": info}
    else:
        reply = {"error": {"code": -32001, "message": "not initialized"}}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], **reply}), flush=True)
"""


def test_a_failed_initialize_stops_the_run_after_the_handshake(tmp_path: Path) -> None:
    script = tmp_path / "refuser.py"
    script.write_text(REFUSES_INITIALIZE)
    code, output = check_cli("--", PYTHON, str(script), timeout=PATIENT)  # it answers all
    assert code == 1, output
    assert "[L0] FAIL  initialize negotiates" in output
    assert "STOPPED: initialize did not succeed (initialize failed: error -32603" in output
    assert "checks that need a session were not run" in output
    assert "refuser: initialize refused: no licence file" in output  # its stderr
    assert output.count("[L0]") == 5  # the handshake up to initialize, not every check
    assert "declared _meta.conformance" not in output


def test_an_http_server_that_refuses_connections_is_reported_once() -> None:
    code, output = _check("--timeout", str(TIMEOUT), "--http", "http://127.0.0.1:9/rcp")
    assert code == 1, output
    assert "STOPPED: no answer to a first ping: cannot connect to http://127.0.0.1:9/rcp" in output
    assert "FAIL" not in output
