"""The conformance checker (§14, §14.5): every MUST of L0, L1 and L2, run against a server.

>>> report = await check(command=["rcpkit", "serve", "--engine", "keyword", "--sample"])
>>> report.certified, report.declared, report.honest
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.check.certify import check
    from rcpkit.check.levels import requirements
    from rcpkit.check.model import LEVELS, Check, Failed, Outcome, Report, Requirement, Skipped
    from rcpkit.check.peer import Exchange, Peer
    from rcpkit.check.peer_http import HttpPeer
    from rcpkit.check.peer_stdio import StdioPeer
    from rcpkit.check.report import render_json, render_text
    from rcpkit.check.runner import ALL_CHECKS, run_checks

# Imported on first use (rcpkit._lazy): importing the package stays cheap, and
# the peers pull in the client and more.
__getattr__ = lazy_exports(
    __name__,
    {
        "certify": ("check",),
        "levels": ("requirements",),
        "model": ("LEVELS", "Check", "Failed", "Outcome", "Report", "Requirement", "Skipped"),
        "peer": ("Exchange", "Peer"),
        "peer_http": ("HttpPeer",),
        "peer_stdio": ("StdioPeer",),
        "report": ("render_json", "render_text"),
        "runner": ("ALL_CHECKS", "run_checks"),
    },
)

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
    "check",
    "render_json",
    "render_text",
    "requirements",
    "run_checks",
]
