"""The server runtime: low-level server, decorator API, dispatcher and session."""

from rcpkit.server.app import App
from rcpkit.server.context import RequestContext
from rcpkit.server.filters import matches
from rcpkit.server.lowlevel import Server
from rcpkit.server.runner import serve, serve_stdio

__all__ = ["App", "RequestContext", "Server", "matches", "serve", "serve_stdio"]
