"""``rcpkit mcp`` on the command line: cheap to declare, clear when the extra is missing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mcp_support import environment

from rcpkit.cli import main


def test_declaring_the_cli_options_imports_no_mcp_sdk() -> None:
    probe = (
        "import sys, rcpkit.cli as cli; cli._parser(); "
        "sdk = ('mcp', 'mcp_types', 'pydantic'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in sdk))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environment(), timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_missing_mcp_extra_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` now fails
    assert main(["mcp", "--", "true"]) == 2
    assert "pip install 'rcpkit[mcp]'" in capsys.readouterr().err


def test_two_engine_sources_at_once_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--url", "http://127.0.0.1:1/rcp", "--", "true"]) == 2
    assert "one of" in capsys.readouterr().err


def test_print_config_for_a_url_never_prints_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://127.0.0.1:8080/rcp"
    assert main(["mcp", "--url", url, "--token", "s3cret", "--print-config"]) == 0
    printed = capsys.readouterr().out
    entry = json.loads(printed)["mcpServers"]["rcpkit"]
    assert "s3cret" not in printed
    assert entry["args"][-3:] == ["--url", url, "--read-only"] and "RCPKIT_TOKEN" in entry["env"]


def test_writes_and_read_only_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--index", "idx", "--writes", "--read-only"]) == 2
    assert "one of --writes, --read-only" in capsys.readouterr().err
