"""How a check ends other than passing: the two exceptions every check may raise."""

from __future__ import annotations

__all__ = ["Failed", "Skipped"]


class Failed(Exception):
    """A MUST the server did not meet; the message says what was seen."""


class Skipped(Exception):
    """The check does not apply (its capability is not advertised, §14.5)."""
