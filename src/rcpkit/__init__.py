"""rcpkit — the Retrieval Context Protocol (RCP/1) in Python."""

from rcpkit.protocol import ErrorCode, RCPError
from rcpkit.server import App, RequestContext, Server, matches

__all__ = [
    "App",
    "ErrorCode",
    "RCPError",
    "RequestContext",
    "Server",
    "__version__",
    "matches",
]

__version__ = "0.1.0"
