"""Helpers for the checker tests: run the check in-process or as ``python -m rcpkit check``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

for _sibling in ("client", "federation", "gateway"):
    _folder = str(Path(__file__).parent.parent / _sibling)
    if _folder not in sys.path:
        sys.path.append(_folder)

from client_support import announced_http, http_server_command  # noqa: E402
from gateway_support import build_index  # noqa: E402

from rcpkit.check import Report, check  # noqa: E402

__all__ = [
    "KEYWORD",
    "PASS_ENV",
    "PATIENT",
    "PYTHON",
    "RAW_SERVER",
    "TIMEOUT",
    "announced_http",
    "build_index",
    "check_cli",
    "failed",
    "http_server_command",
    "run_check",
]

PYTHON = sys.executable
KEYWORD = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword", "--sample"]
RAW_SERVER = [PYTHON, str(Path(__file__).with_name("raw_server_support.py"))]
# Short: a server that never answers one probe costs this much, not the default 10 s.
# Only for servers built to hang on some probe, where the test asserts only that the
# probe fails: a server still starting (python and rcpkit imports, seconds on a loaded
# machine) misses a 2 s first ping, so a test whose outcome needs every answer, or the
# server's own exit, waits PATIENT — an event ends the wait, not the bound.
TIMEOUT = 2.0
# For a server that must pass: a loaded machine (2 cores, many agents) can take
# seconds over one probe, and a timeout must never turn that into a FAIL. A
# correct server answers long before this; only a real hang costs it.
PATIENT = 40.0
# §15.1: the checker withholds the environment from the server it spawns; pass
# PYTHONPATH through so a worktree's servers (not the installed rcpkit) are checked.
PASS_ENV = ("PYTHONPATH",)


def run_check(command: list[str] | None = None, **options: Any) -> Report:
    options.setdefault("timeout", TIMEOUT)
    if command is not None:
        options.setdefault("pass_env", PASS_ENV)
    return asyncio.run(check(command=command, **options))


def failed(report: Report) -> set[str]:
    return {outcome.id for outcome in report.outcomes if outcome.status == "FAIL"}


def check_cli(*args: str, timeout: float = TIMEOUT) -> tuple[int, str]:
    """``rcpkit check ARGS``; ``timeout`` per probe (PATIENT for a server that must answer)."""
    done = subprocess.run(
        [PYTHON, "-m", "rcpkit", "check", "--timeout", str(timeout), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=90,
    )
    return done.returncode, done.stdout.decode()


def json_report(output: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(output)
    return report
