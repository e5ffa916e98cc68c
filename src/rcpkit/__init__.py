"""rcpkit — the Retrieval Context Protocol (RCP/1) in Python.

In process (``rcpkit.library``, imported on first use): ``rcpkit.open(path)``
gives an :class:`Index` to add documents to and search, no server needed.
"""

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports
from rcpkit.protocol import ErrorCode, RCPError
from rcpkit.server import App, RequestContext, Server, matches

if TYPE_CHECKING:
    from rcpkit.library import (
        AddResult,
        AsyncIndex,
        Index,
        LibraryError,
        SearchResult,
        open,
        open_async,
    )

__all__ = [
    "AddResult",
    "App",
    "AsyncIndex",
    "ErrorCode",
    "Index",
    "LibraryError",
    "RCPError",
    "RequestContext",
    "SearchResult",
    "Server",
    "__version__",
    "matches",
    "open",
    "open_async",
]

__version__ = "0.1.0"

# The engine (numpy, the stores, the models) loads when the in-process API is first used.
__getattr__ = lazy_exports(
    __name__,
    {
        "library": (
            "AddResult",
            "AsyncIndex",
            "Index",
            "LibraryError",
            "SearchResult",
            "open",
            "open_async",
        )
    },
)
