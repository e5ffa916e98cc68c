"""How a check ends other than passing: the exceptions every check may raise."""

from __future__ import annotations

__all__ = ["Failed", "Gone", "Skipped"]


class Failed(Exception):
    """A MUST the server did not meet; the message says what was seen."""


class Gone(Failed):
    """The server is not there: a spawned one closed its output, an HTTP one refused us."""


class Skipped(Exception):
    """The check does not apply (its capability is not advertised, §14.5)."""
