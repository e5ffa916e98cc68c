"""Trust signals for hits (§15.2): provenance level and a prompt-injection screen.

The screen looks for text aimed at a language model rather than at a reader:
instructions to ignore or override earlier instructions, to reveal a system
prompt, chat-role markers, and invisible Unicode (zero-width and bidi
controls, tag characters) that can hide such text. Invisible characters are
stripped (``sanitized``); everything else is only flagged, never edited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Screen", "screen", "trust_level"]

# Each pattern with the words it cannot match without: one of every group must occur in
# the lower-cased text. A few `in` tests then spare ordinary prose the regular
# expressions (measured on 193-character chunks: 53 µs a chunk for the seven patterns,
# about 3 µs for the tests). Only ASCII text is guarded: IGNORECASE also matches
# letters such as "ſ", "K" or "İ" that lower() does not map to ASCII.
_INSTRUCTIONS: list[tuple[tuple[tuple[str, ...], ...], str]] = [
    (
        (
            ("ignore", "disregard", "forget", "override"),
            ("previous", "prior", "above", "earlier", "all", "any"),
            ("instruction", "prompt", "rule", "direction", "message"),
        ),
        r"\b(ignore|disregard|forget|override)\b.{0,40}\b(previous|prior|above|earlier|all|any)\b"
        r".{0,40}\b(instructions?|prompts?|rules?|directions?|messages?)\b",
    ),
    (
        (
            ("reveal", "print", "show", "repeat", "output"),
            ("system", "hidden", "initial"),
            ("prompt", "instruction"),
        ),
        r"\b(reveal|print|show|repeat|output)\b.{0,30}\b(system|hidden|initial)\s+"
        r"(prompt|instructions?)\b",
    ),
    ((("you",), ("are",), ("now",)), r"\byou\s+are\s+now\s+(a|an|in)\b"),
    ((("new", "updated"), ("instruction",), (":",)), r"\b(new|updated)\s+instructions?\s*:"),
    (
        (("do",), ("not",), ("tell", "inform"), ("user",)),
        r"\bdo\s+not\s+(tell|inform)\s+the\s+user\b",
    ),
    (
        (("act",), ("as",), ("unrestricted", "jailbroken", "dan")),
        r"\bact\s+as\s+(if\s+you\s+were|a|an)\b.{0,40}\b(unrestricted|jailbroken|dan)\b",
    ),
]
_ROLE_MARKERS = (
    r"(<\|?(im_start|im_end|system|assistant|user)\|?>|\[/?INST\]|^\s*(system|assistant)\s*:)"
)
_ROLE_GUARD = (("<", "[inst]", "[/inst]", "system", "assistant"),)
_PATTERNS = [
    (guard, re.compile(pattern, re.IGNORECASE | re.DOTALL)) for guard, pattern in _INSTRUCTIONS
] + [(_ROLE_GUARD, re.compile(_ROLE_MARKERS, re.IGNORECASE | re.MULTILINE))]
# Zero-width, bidi embedding/override/isolate controls, and Unicode tag characters.
_INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)


@dataclass(frozen=True, slots=True)
class Screen:
    text: str
    injection_suspected: bool
    sanitized: bool


def screen(text: str) -> Screen:
    """Strip invisible characters and flag instruction-like text."""
    cleaned, removed = _INVISIBLE.subn("", text)
    suspected = removed > 0 or _instruction_like(cleaned)
    return Screen(cleaned, suspected, removed > 0)


def _instruction_like(text: str) -> bool:
    if not text.isascii():
        return any(pattern.search(text) for _, pattern in _PATTERNS)
    lowered = text.lower()
    return any(
        all(any(word in lowered for word in group) for group in guard) and pattern.search(text)
        for guard, pattern in _PATTERNS
    )


def trust_level(origin: str, uri: str | None, trusted_sources: Sequence[str]) -> str:
    """§15.2 provenance: what the operator vouched for, ingested, or a client sent.

    ``trusted``: files the operator ingested (``rcpkit index``) from a configured
    trusted location. ``community``: the operator's other ingested files — chosen
    from their own disk, so not untrusted (issue 52: every local hit was flagged),
    but not vouched for either, so never ``trusted`` (§15.2: no user-generated or
    scraped content is). ``untrusted``: text a client added over ``index/add``,
    whatever ``file://`` uri it claims.
    """
    if origin != "ingest":
        return "untrusted"
    if uri and any(uri.startswith(p) for p in trusted_sources if p):
        return "trusted"
    return "community"
