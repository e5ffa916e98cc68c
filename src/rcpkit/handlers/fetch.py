"""An image block's ``uri``, fetched under the operator's prefixes (§4.8, §15.5).

``file://``: the resolved path (symlinks followed) must stay inside an allowed
``file://`` prefix's folder. ``http(s)://``: one GET, no redirect followed, and
the whole of it (connect, status line and headers, body) bounded by the
request's remaining deadline: a watchdog shuts the socket down when the
deadline passes or the request is cancelled, so a source that drips one byte
at a time cannot hold a worker past the request (issue 35; a timeout per
socket read let four dripping GETs starve the pool for a minute).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from rcpkit.engine.request import EngineRequest
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.server.blocks import fetches

__all__ = ["MAX_FETCH_BYTES", "fetch"]

MAX_FETCH_BYTES = 32 * 1024 * 1024  # §15.5: a fetched image is bounded like a request body
_FETCH_TIMEOUT = 30.0  # a request without a deadline still gets no more than this
_WATCH_STEP = 0.1  # how often the watchdog looks for a cancel


def fetch(uri: str, path: str, ctx: EngineRequest, fetchable: Sequence[str]) -> bytes:
    """The bytes at ``uri``, which must lie under an operator-allowed prefix.

    Anything that cannot be fetched is -32602 (§4.8); more than `MAX_FETCH_BYTES`
    is -32013; a GET still running at the deadline is -32014 (§13.1).
    """
    if not fetches(uri, fetchable):
        raise RCPError.invalid_params(path, f"`{path}` carries a uri this server does not fetch")
    parts = urlsplit(uri)
    if parts.scheme == "file":
        return _read_file(parts.netloc, unquote(parts.path), path, fetchable)
    return _get(uri, path, ctx)


def _get(uri: str, path: str, ctx: EngineRequest) -> bytes:
    parts = urlsplit(uri)
    remaining = ctx.remaining()
    budget = _FETCH_TIMEOUT if remaining is None else min(remaining, _FETCH_TIMEOUT)
    if budget <= 0:
        ctx.check_cancelled()
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=max(budget, 0.01))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    watchdog = _Watchdog(connection, ctx, time.monotonic() + budget)
    try:
        connection.request("GET", target)
        answer = connection.getresponse()
        if not 200 <= answer.status < 300:  # a redirect is not followed (§15.5 SSRF)
            raise _unfetchable(path, uri, f"HTTP {answer.status}")
        raw = answer.read(MAX_FETCH_BYTES + 1)
    except (OSError, http.client.HTTPException, ValueError) as error:
        if watchdog.fired:
            ctx.check_cancelled()  # -32014 past the deadline, -32006 when cancelled
            raise _unfetchable(path, uri, f"no answer in {_FETCH_TIMEOUT:.0f} s") from None
        raise _unfetchable(path, uri, type(error).__name__) from None
    finally:
        watchdog.stop()
        connection.close()
    if watchdog.fired:  # the body ended because the socket was shut down
        ctx.check_cancelled()
        raise _unfetchable(path, uri, f"no answer in {_FETCH_TIMEOUT:.0f} s")
    if len(raw) > MAX_FETCH_BYTES:
        raise _too_large(path)
    return raw


class _Watchdog:
    """Shuts ``connection``'s socket down at ``ends`` or once ``ctx`` is cancelled.

    A blocked read on the worker then returns at once: the worker is free when
    the request's answer (-32014, -32006) is, not when the source stops sending.
    """

    def __init__(self, connection: http.client.HTTPConnection, ctx: EngineRequest, ends: float):
        self._connection = connection
        self._ctx = ctx
        self._ends = ends
        self._done = threading.Event()
        self.fired = False
        self._thread = threading.Thread(target=self._watch, name="rcpkit-fetch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(min(_WATCH_STEP, max(0.0, self._ends - time.monotonic()))):
            if self.fired or time.monotonic() >= self._ends or _stopped(self._ctx):
                self.fired = True
                if self._shut():
                    return

    def _shut(self) -> bool:
        """Whether the socket was shut down (none yet while connecting: look again)."""
        sock = self._connection.sock
        if sock is None:
            return False
        with contextlib.suppress(OSError):  # closed meanwhile by the worker
            # The plain socket's shutdown, also under TLS: it only wakes the reader.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        return True


def _stopped(ctx: EngineRequest) -> bool:
    try:
        ctx.check_cancelled()
    except RCPError:
        return True
    return False


def _read_file(host: str, local: str, path: str, fetchable: Sequence[str]) -> bytes:
    if host not in ("", "localhost"):
        raise RCPError.invalid_params(path, f"`{path}`: a file:// uri names no other host")
    target = Path(local).resolve()
    roots = [Path(unquote(urlsplit(p).path)).resolve() for p in fetchable if p.startswith("file:")]
    if not any(target.is_relative_to(root) for root in roots):
        raise RCPError.invalid_params(path, f"`{path}` leaves the folders this server reads")
    try:
        if target.stat().st_size > MAX_FETCH_BYTES:
            raise _too_large(path)
        return target.read_bytes()
    except OSError as error:
        raise _unfetchable(path, target.as_uri(), type(error).__name__) from None


def _unfetchable(path: str, uri: str, detail: str) -> RCPError:
    return RCPError.invalid_params(path, f"`{path}`: {uri} could not be fetched ({detail})")


def _too_large(path: str) -> RCPError:
    message = f"`{path}`: the fetched image exceeds {MAX_FETCH_BYTES} bytes"
    return RCPError(ErrorCode.PAYLOAD_TOO_LARGE, message, field=path)
