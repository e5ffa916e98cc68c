"""``rcpkit console URL``: the console's files served locally, calling a remote RCP server.

A small threaded HTTP server (the standard library's; nothing to install) on
loopback answers ``/ui`` through :class:`ConsoleSite`, whose ``config.json``
names the remote endpoint and whose CSP allows calls to it alone. The remote
server must allow this page's origin (``--cors-origin http://127.0.0.1:PORT``
for ``rcpkit serve``), as any browser client of another origin needs.
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from rcpkit.console.assets import CONSOLE_PATH, ConsoleSite

__all__ = ["LocalConsole", "check_endpoint"]


# scheme://host[:port][/path]: a DNS name or IPv4 address, or an IPv6 one in brackets.
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"|\[[0-9A-Fa-f:.]+\]"
)
_NETLOC = re.compile(rf"(?P<host>{_HOST.pattern})(?::(?P<port>[0-9]{{1,5}}))?")
# RFC 3986 path characters, without ';' and ',' (they separate CSP directives and sources)
# and without quotes (a CSP source keyword is quoted).
_PATH = re.compile(r"(?:/[A-Za-z0-9._~!$&()*+=:@%-]*)*")


def check_endpoint(url: str) -> str:
    """``url`` as an RCP base the console can call: ``scheme://host[:port][/path]``.

    The console copies the URL into its ``config.json`` and its origin into its
    Content-Security-Policy (issue 52: ``http://127.0.0.1:1;frame-src *`` added a
    directive), so anything but http(s), a valid host, a port and a plain path
    is refused. Credentials (``user:password@``) are refused, not stripped: the
    console would publish them to every visitor; the console's Token field is
    where a server's token goes.
    """
    example = "such as http://127.0.0.1:8080/rcp"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"expected an RCP endpoint {example}, not {url!r}")
    if "@" in parts.netloc:
        raise ValueError(
            "the URL carries credentials (user:password@), which the console would publish "
            "to every visitor: leave them out and enter the server's token in the console's "
            "Token field"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"an RCP endpoint has no query or fragment: {url!r}")
    found = _NETLOC.fullmatch(parts.netloc)
    port = found.group("port") if found else None
    if found is None or (port is not None and not 0 < int(port) < 65536):
        raise ValueError(f"not a host[:port] in {url!r}: expected an RCP endpoint {example}")
    if not _PATH.fullmatch(parts.path):
        raise ValueError(
            f"the path of {url!r} may hold letters, digits and -._~!$&()*+=:@%/ only "
            "(no ';', ',', quotes or spaces)"
        )
    return url.rstrip("/")


class LocalConsole:
    """The console on ``host:port`` (port 0: a free one) for the RCP server at ``api``."""

    def __init__(
        self, api: str, *, metrics: str | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        checked = None if metrics is None else check_endpoint(metrics)
        self.site = ConsoleSite(check_endpoint(api), checked)
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
