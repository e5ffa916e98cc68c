"""The console's files and headers, for any web server to send: a path in, a reply out.

The HTTP transport (``/ui`` beside the RCP endpoint) and ``rcpkit console``'s
local server both answer through :meth:`ConsoleSite.reply`, so the two send
the same bytes under the same Content-Security-Policy: scripts and styles from
this origin only (no inline script, no CDN), network calls to this origin and
the configured RCP endpoint only, no framing.

The pages themselves are public (they hold no data, and a browser cannot send
a bearer token when it navigates); every call they make goes through the RCP
endpoint's own authentication.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from urllib.parse import urlsplit

__all__ = ["CONSOLE_PATH", "ConsoleSite", "StaticReply"]

CONSOLE_PATH = "/ui"
CONFIG_FILE = "config.json"  # generated: where the RCP endpoint and /metrics are

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
_FIXED_HEADERS = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cache-control", "no-cache"),  # revalidate: a new rcpkit ships new files
)


@dataclass(frozen=True, slots=True)
class StaticReply:
    """One HTTP response for the console: status, headers (lower-case names), body."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class ConsoleSite:
    """The console as served from one place.

    ``api``: the RCP base the pages call (a path on this origin such as ``/rcp``,
    or an absolute URL). ``metrics``: where ``GET /metrics`` answers, or None.
    """

    api: str
    metrics: str | None = None
    extra_origins: tuple[str, ...] = field(default=())

    def owns(self, path: str) -> bool:
        """Whether ``path`` is the console's (``/ui``, ``/ui/…``)."""
        return path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/")

    def reply(self, verb: str, path: str) -> StaticReply:
        """The answer to ``verb path`` for a path the console owns."""
        if verb not in ("GET", "HEAD"):
            return StaticReply(405, (("allow", "GET, HEAD"),))
        name = path[len(CONSOLE_PATH) :].lstrip("/") or "index.html"
        if name == CONFIG_FILE:
            body = json.dumps({"api": self.api, "metrics": self.metrics}).encode()
            return self._ok(body, _TYPES[".json"], verb)
        shipped = _file(name)
        if shipped is None:
            return StaticReply(404, (("content-type", "text/plain; charset=utf-8"),), b"not found")
        return self._ok(shipped, _TYPES[name[name.rfind(".") :]], verb)

    @property
    def content_security_policy(self) -> str:
        connect = " ".join(["'self'", *self._remote_origins()])
        return (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src {connect}; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'"
        )

    def _remote_origins(self) -> list[str]:
        origins = list(self.extra_origins)
        for url in (self.api, self.metrics):
            if url is not None and "://" in url:
                parts = urlsplit(url)
                origins.append(f"{parts.scheme}://{parts.netloc}")
        return sorted(set(origins))

    def _ok(self, body: bytes, content_type: str, verb: str) -> StaticReply:
        headers = (
            ("content-type", content_type),
            ("content-length", str(len(body))),
            ("content-security-policy", self.content_security_policy),
            *_FIXED_HEADERS,
        )
        return StaticReply(200, headers, b"" if verb == "HEAD" else body)


@cache
def _file(name: str) -> bytes | None:
    """A shipped file by its name under ``static/``; None for anything else."""
    if name not in _shipped():
        return None  # also refuses `..`, absolute paths and directories
    return resources.files(__package__).joinpath("static", *name.split("/")).read_bytes()


@cache
def _shipped() -> frozenset[str]:
    root = resources.files(__package__).joinpath("static")
    names: set[str] = set()
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((entry, f"{prefix}{entry.name}/"))
            elif entry.name[entry.name.rfind(".") :] in _TYPES:
                names.add(prefix + entry.name)
    return frozenset(names)
