"""`rcpkit console URL` takes an endpoint, never directives or credentials (issue 52).

The URL's origin goes into the console's Content-Security-Policy and the URL into
its ``/ui/config.json``: ``http://127.0.0.1:18081;frame-src *;report-uri …`` added
directives to the policy, and a ``user:pass@`` part was published to every
visitor. The real command as a child process, read over HTTP.
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from console_support import child_environment, rcpkit_command

from process_support import read_until, stop


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:18081;frame-src *;report-uri http://evil.example/", "host[:port]"),
        ("http://127.0.0.1:18081 frame-src *", "host[:port]"),
        ("http://user:secret@127.0.0.1:18081/rcp", "credentials"),
        ("http://user@127.0.0.1:18081/rcp", "credentials"),
        ("http://127.0.0.1:99999/rcp", "host[:port]"),
        ("http://exa_mple..com/rcp", "host[:port]"),
        ("http://127.0.0.1:18081/rcp;script-src *", "path"),
        ("http://127.0.0.1:18081/r'cp", "path"),
        ("javascript:alert(1)", "expected an RCP endpoint"),
    ],
)
def test_a_url_that_is_not_an_endpoint_is_refused_in_one_line(url: str, said: str) -> None:
    done = subprocess.run(
        rcpkit_command("console", url, "--no-open", "--port", "0"),
        capture_output=True, text=True, timeout=60, env=child_environment(), check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "secret" not in done.stderr and "Traceback" not in done.stderr


@contextmanager
def _console(*options: str) -> Iterator[tuple[str, bytes]]:
    """The command serving; its console's URL and what it said on stderr so far."""
    process = subprocess.Popen(
        rcpkit_command("console", *options, "--no-open", "--port", "0"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_environment(),
    )  # fmt: skip
    try:
        match, said = read_until(process, b"", rb"console for \S+ on (http://\S+/ui)", 60)
        yield match.group(1).decode(), said
    finally:
        stop(process)


def _get(url: str) -> tuple[dict[str, str], bytes]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return {k.lower(): v for k, v in response.headers.items()}, response.read()


def test_an_endpoint_goes_into_the_policy_as_its_origin_alone() -> None:
    endpoint = "http://127.0.0.1:18081/rcp"
    metrics = "http://[::1]:18082/metrics"
    with _console(endpoint, "--metrics", metrics) as (url, said):
        headers, body = _get(f"{url}/config.json")
    assert json.loads(body) == {"api": endpoint, "metrics": metrics}
    policy = [part.strip() for part in headers["content-security-policy"].split(";")]
    assert "connect-src 'self' http://127.0.0.1:18081 http://[::1]:18082" in policy
    assert len(policy) == 8  # the fixed directives, none added
    assert b"WARNING" not in said


def test_a_console_on_every_interface_is_served_with_a_warning() -> None:
    with _console("http://127.0.0.1:18081/rcp", "--host", "0.0.0.0") as (url, said):
        headers, _ = _get(url.replace("0.0.0.0", "127.0.0.1"))
    assert b"WARNING: --host 0.0.0.0 serves the console" in said
    assert headers["content-type"].startswith("text/html")
