"""Helpers for the observability and routing tests: servers whose stderr is kept, scrapes."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "SPAWN",
    "TREE",
    "access_lines",
    "free_port",
    "logged_http",
    "rcp",
    "sample",
    "wait_for_text",
]


# Spawned servers get a least-privilege environment (§15.1): without PYTHONPATH they
# would import the installed rcpkit, not the tree under test.
TREE: dict[str, Any] = {"passEnv": ["PYTHONPATH"]}
SPAWN: dict[str, Any] = {"pass_env": ("PYTHONPATH",), "connect_timeout": 60}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_text(path: Path, pattern: str, timeout: float = 60.0) -> re.Match[str]:
    """The first match of ``pattern`` in the file at ``path``, waiting (bounded) for it."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text() if path.exists() else ""
        found = re.search(pattern, text)
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no {pattern!r} within {timeout} s in:\n{text}")
        time.sleep(0.02)


@contextlib.contextmanager
def logged_http(command: Sequence[str], stderr: Path) -> Iterator[str]:
    """Run an HTTP server whose stderr goes to ``stderr``; yield the RCP URL it announces."""
    with stderr.open("w") as sink:
        process = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink
        )
    try:
        found = wait_for_text(stderr, r"serving RCP over HTTP on (http://\S+)")
        yield found.group(1)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def access_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON access lines of a stderr/log file (other log lines skipped)."""
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def sample(metrics: str, name: str, **labels: str) -> float | None:
    """The value of one Prometheus sample, or None when it is absent."""
    for line in metrics.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        metric, _, raw_labels = head.partition("{")
        if metric != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', raw_labels))
        if all(found.get(key) == wanted for key, wanted in labels.items()):
            return float(value)
    return None


def rcp(url: str, method: str, params: dict[str, Any], **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(f"{url}/{method}", json=body, headers=headers, timeout=60)
