"""The report as text (one line a check, then the verdict) or as the §14.5 JSON document."""

from __future__ import annotations

import json

from rcpkit.check.model import Report

__all__ = ["render_json", "render_text"]


def render_text(report: Report) -> str:
    lines = [f"rcpkit check: {report.target} ({report.transport})"]
    for outcome in report.outcomes:
        detail = f" — {outcome.detail}" if outcome.detail else ""
        lines.append(
            f"  [{outcome.level}] {outcome.status:<5} {outcome.title} ({outcome.section}){detail}"
        )
    for requirement in report.requirements:
        status = "MET" if requirement.met else "UNMET"
        detail = f" — {requirement.detail}" if requirement.detail else ""
        lines.append(f"  [{requirement.level}] {status:<5} {requirement.title}{detail}")
    if report.outcomes:
        lines.append(
            f"  {report.count('PASS')} passed, {report.count('FAIL')} failed, "
            f"{report.count('SKIP')} skipped"
        )
    if report.stopped is not None:
        return "\n".join([*lines, *_stopped(report)])
    lines.append(f"  CERTIFIED LEVEL: {report.certified or 'none'}")
    verdict = "consistent" if report.honest else "OVERCLAIM"
    if report.declared is None:
        verdict = "MISSING (§14: a server MUST state its level)"
    lines.append(f"  declared _meta.conformance={report.declared!r} — {verdict}")
    return "\n".join(lines)


def _stopped(report: Report) -> list[str]:
    lines = [f"  STOPPED: {report.stopped}"]
    if report.stderr_tail:
        lines.append("  the server's stderr ended with:")
        lines.extend(f"    {line}" for line in report.stderr_tail)
    elif report.transport == "stdio":
        lines.append("  the server wrote nothing to stderr")
    lines.append("  CERTIFIED LEVEL: none (not certified: the run did not finish)")
    return lines


def render_json(report: Report) -> str:
    return json.dumps(report.to_wire(), indent=2, ensure_ascii=False)
