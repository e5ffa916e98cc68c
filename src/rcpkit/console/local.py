"""``rcpkit console URL``: the console's files served locally, calling a remote RCP server.

A small threaded HTTP server (the standard library's; nothing to install) on
loopback answers ``/ui`` through :class:`ConsoleSite`, whose ``config.json``
names the remote endpoint and whose CSP allows calls to it alone. The remote
server must allow this page's origin (``--cors-origin http://127.0.0.1:PORT``
for ``rcpkit serve``), as any browser client of another origin needs.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from rcpkit.console.assets import CONSOLE_PATH, ConsoleSite

__all__ = ["LocalConsole", "check_endpoint"]


def check_endpoint(url: str) -> str:
    """``url`` as an RCP base the console can call: http(s), a host, no query."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"expected an RCP endpoint such as http://127.0.0.1:8080/rcp, not {url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"an RCP endpoint has no query or fragment: {url!r}")
    return url.rstrip("/")


class LocalConsole:
    """The console on ``host:port`` (port 0: a free one) for the RCP server at ``api``."""

    def __init__(
        self, api: str, *, metrics: str | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.site = ConsoleSite(check_endpoint(api), metrics)
        self._server = ThreadingHTTPServer((host, port), _handler(self.site))
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        address = self._server.server_address
        host = address[0].decode() if isinstance(address[0], bytes) else str(address[0])
        port = address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}{CONSOLE_PATH}"

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def start(self) -> threading.Thread:
        """Serve on a daemon thread (tests); ``close`` stops it."""
        thread = threading.Thread(target=self.serve_forever, name="rcpkit-console", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(site: ConsoleSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "rcpkit-console"
        sys_version = ""

        def do_GET(self) -> None:
            self._answer()

        def do_HEAD(self) -> None:
            self._answer()

        def _answer(self) -> None:
            path = urlsplit(self.path).path
            if path in ("", "/"):
                self.send_response(302)
                self.send_header("location", CONSOLE_PATH)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            if not site.owns(path):
                reply_status, headers, body = 404, [("content-length", "0")], b""
            else:
                reply = site.reply(self.command, path)
                reply_status, headers, body = reply.status, list(reply.headers), reply.body
            self.send_response(reply_status)
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # §15.6: no request logs by default

    return Handler
