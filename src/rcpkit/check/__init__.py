"""The conformance checker (§14, §14.5): every MUST of L0, L1 and L2, run against a server.

>>> report = await check(command=["rcpkit", "serve", "--engine", "keyword", "--sample"])
>>> report.certified, report.declared, report.honest
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rcpkit.check.command import add_arguments, check, run
    from rcpkit.check.levels import requirements
    from rcpkit.check.model import LEVELS, Check, Failed, Outcome, Report, Requirement, Skipped
    from rcpkit.check.peer import Exchange, Peer
    from rcpkit.check.peer_http import HttpPeer
    from rcpkit.check.peer_stdio import StdioPeer
    from rcpkit.check.report import render_json, render_text
    from rcpkit.check.runner import ALL_CHECKS, run_checks

# Imported on first use: the CLI declares this package's options (``options``)
# at every start-up, and the rest pulls in the client and more.
_HOMES = {
    "add_arguments": "command",
    "check": "command",
    "run": "command",
    "requirements": "levels",
    "LEVELS": "model",
    "Check": "model",
    "Failed": "model",
    "Outcome": "model",
    "Report": "model",
    "Requirement": "model",
    "Skipped": "model",
    "Exchange": "peer",
    "Peer": "peer",
    "HttpPeer": "peer_http",
    "StdioPeer": "peer_stdio",
    "render_json": "report",
    "render_text": "report",
    "ALL_CHECKS": "runner",
    "run_checks": "runner",
}

__all__ = [
    "ALL_CHECKS",
    "LEVELS",
    "Check",
    "Exchange",
    "Failed",
    "HttpPeer",
    "Outcome",
    "Peer",
    "Report",
    "Requirement",
    "Skipped",
    "StdioPeer",
    "add_arguments",
    "check",
    "render_json",
    "render_text",
    "requirements",
    "run",
    "run_checks",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
