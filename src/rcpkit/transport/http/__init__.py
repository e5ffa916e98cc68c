"""RCP over HTTP (§5.2): an ASGI app on uvicorn with SSE, sessions, auth, CORS and limits.

>>> app = build_http_app(server, HttpConfig(stateful=True))   # any ASGI server
>>> run_http(server, HttpConfig(), Listen(port=8080))          # uvicorn, until SIGTERM

Needs the ``http`` extra (uvicorn, httptools, starlette).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcpkit._lazy import lazy_exports

if TYPE_CHECKING:
    from rcpkit.transport.http.app import HttpApp, build_http_app
    from rcpkit.transport.http.auth import Credential, Credentials, Principal
    from rcpkit.transport.http.config import HeadLimits, HttpConfig, Listen, RateLimit, parse_bind
    from rcpkit.transport.http.serve import run_http, serve_http

# Imported on first use (rcpkit._lazy): importing the package stays cheap, and
# the CLI reads ``config``'s defaults at every start-up, and the app pulls in Starlette.
__getattr__ = lazy_exports(
    __name__,
    {
        "app": ("HttpApp", "build_http_app"),
        "auth": ("Credential", "Credentials", "Principal"),
        "config": ("HeadLimits", "HttpConfig", "Listen", "RateLimit", "parse_bind"),
        "serve": ("run_http", "serve_http"),
    },
)

__all__ = [
    "Credential",
    "Credentials",
    "HeadLimits",
    "HttpApp",
    "HttpConfig",
    "Listen",
    "Principal",
    "RateLimit",
    "build_http_app",
    "parse_bind",
    "run_http",
    "serve_http",
]
