"""The conformance checker (§14, §14.5): every MUST of L0, L1 and L2, run against a server.

>>> report = await check(command=["rcpkit", "serve", "--engine", "keyword", "--sample"])
>>> report.certified, report.declared, report.honest
"""

from rcpkit.check.command import add_arguments, check, run
from rcpkit.check.levels import requirements
from rcpkit.check.model import LEVELS, Check, Failed, Outcome, Report, Requirement, Skipped
from rcpkit.check.peer import Exchange, Peer
from rcpkit.check.peer_http import HttpPeer
from rcpkit.check.peer_stdio import StdioPeer
from rcpkit.check.report import render_json, render_text
from rcpkit.check.runner import ALL_CHECKS, run_checks

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
