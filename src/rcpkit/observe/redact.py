"""Redaction of query text for ``--log-queries`` (§15.6: support redaction)."""

from __future__ import annotations

import re

__all__ = ["MAX_LOGGED_CHARS", "redact"]

MAX_LOGGED_CHARS = 256

_PATTERNS = (
    # e-mail addresses
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "[email]"),
    # credentials: bearer tokens, key=value secrets, long opaque tokens
    (re.compile(r"(?i)\bbearer\s+\S+"), "[secret]"),
    (
        re.compile(r"(?i)\b(password|passwd|pwd|secret|token|api[_-]?key)\s*[:=]\s*\S+"),
        r"\1=[secret]",
    ),
    (
        re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{24,}\b"),
        "[secret]",
    ),
    # card, phone and account numbers: runs of 7+ digits, spaces or dashes allowed
    (re.compile(r"\+?\d[\d\s\-]{5,}\d"), "[number]"),
)


def redact(text: str, limit: int = MAX_LOGGED_CHARS) -> str:
    """``text`` with e-mails, secrets and long numbers masked, cut to ``limit`` characters."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    if len(text) > limit:
        text = text[:limit] + "…"
    return text
