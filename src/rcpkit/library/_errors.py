"""The in-process API's one exception: a clear message, never a lower layer's traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rcpkit.protocol.errors import RCPError

__all__ = ["LibraryError", "translated"]


class LibraryError(ValueError):
    """A call on an :class:`~rcpkit.Index` that cannot be done, and why.

    A ``ValueError``, as the engine's own refusals of bad settings are, so the
    command line reports it as one line (exit 2).

    ``code`` is the RCP error code the same request gets over the wire (-32602
    for a bad parameter, -32005 for an option the index does not offer, …)
    or None for what only the library can get wrong (a closed index);
    ``field`` names the offending parameter when there is one.
    """

    def __init__(self, message: str, *, code: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field


@contextmanager
def translated() -> Iterator[None]:
    """The engine's and the protocol's errors as :class:`LibraryError` (the cause is kept)."""
    try:
        yield
    except LibraryError:
        raise  # already says what the caller did wrong
    except RCPError as error:
        message = error.message if not error.detail else f"{error.message} ({error.detail})"
        raise LibraryError(message, code=error.code, field=error.field) from error
    except (ValueError, KeyError, OSError) as error:
        # Settings (SettingError), a store's refusal, a missing file: the message says why.
        raise LibraryError(str(error)) from error
