"""Ids, in-flight calls, notifications, cancellation and deadlines over one channel.

Responses are correlated by id, never by arrival order (§4.7). A call the
caller gave up on (cancelled its task, or its deadline passed) is *abandoned*:
``notifications/cancel`` goes out (§7.14) and the late answer, if it comes,
is recognised and discarded (§13.1). When the channel dies every in-flight
call fails with :class:`TransportClosed` (§13.1).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from rcpkit import codec
from rcpkit.client.channel import Channel, Outgoing
from rcpkit.client.errors import DeadlineExceeded, TransportClosed
from rcpkit.codec import Message, Notification, Request, Response
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Connection", "LogCallback", "ProgressCallback", "SentCallback"]

log = logging.getLogger("rcpkit.client")

ProgressCallback = Callable[[m.ProgressParams], None]
LogCallback = Callable[[m.LogParams], None]
SentCallback = Callable[[Id], None]
T = TypeVar("T")

# How many abandoned ids are remembered so that their late answers are recognised.
_ABANDONED_MEMORY = 4096


@dataclass(slots=True)
class _Pending:
    method: str
    future: asyncio.Future[Any]
    token: str | None
    on_progress: ProgressCallback | None
    on_log: LogCallback | None
    size: int = 0  # bytes of the request's line: an oversized-line error names it


def _key(id: Id) -> tuple[type, Id]:
    # §4.7: the id is echoed with the same type, so 7 and "7" are different calls.
    return (type(id), id)


class Connection:
    """The client's dispatcher: one per channel."""

    def __init__(self, channel: Channel, *, on_log: LogCallback | None = None) -> None:
        self.channel = channel
        self._on_log = on_log
        self._ids = itertools.count(1)
        self._pending: dict[tuple[type, Id], _Pending] = {}
        self._tokens: dict[str, _Pending] = {}
        self._abandoned: OrderedDict[tuple[type, Id], str] = OrderedDict()
        self._lost: str | None = None
        self._gone = asyncio.Event()

    async def open(self) -> None:
        await self.channel.open(self)

    @property
    def lost_reason(self) -> str | None:
        """Why the channel died, or None while it is alive."""
        return self._lost

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    async def wait_lost(self) -> str:
        """Wait until the channel dies (bound it with a timeout); why it died."""
        await self._gone.wait()
        assert self._lost is not None
        return self._lost

    # --- calls ---

    async def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        on_log: LogCallback | None = None,
        on_sent: SentCallback | None = None,
        want_progress: bool = False,
    ) -> Any:
        """Send one request and wait (at most ``timeout`` seconds) for its answer."""
        if self._lost is not None:
            raise TransportClosed(self._lost)
        id: Id = next(self._ids)
        token = f"rcpkit-{id}" if want_progress else None
        data = self._encode(id, method, _with_meta(params, timeout, token))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        pending = _Pending(method, future, token, on_progress, on_log, len(data))
        self._pending[_key(id)] = pending
        if token is not None:
            self._tokens[token] = pending
        self.channel.send(Outgoing(data, method, id, stream=token is not None))
        if on_sent is not None:
            on_sent(id)
        try:
            done, _ = await asyncio.wait({future}, timeout=timeout)
        except asyncio.CancelledError:
            self._abandon(id, "cancelled by the client")
            raise
        if not done:
            self._abandon(id, "client deadline exceeded")
            assert timeout is not None
            raise DeadlineExceeded(method, timeout)
        return future.result()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (no id, never answered, §4.5)."""
        if self._lost is None:
            self.channel.send(Outgoing(codec.encode_notification(method, params), method))

    def cancel(self, id: Id, reason: str | None = None) -> None:
        """§7.14: ask the server to stop ``id``; its one answer (result or -32006) still comes."""
        if _key(id) in self._pending:
            params: dict[str, Any] = {"id": id}
            if reason:
                params["reason"] = reason
            self.notify("notifications/cancel", params)

    def _abandon(self, id: Id, reason: str) -> None:
        pending = self._pending.pop(_key(id), None)
        if pending is None:
            return
        self._forget_token(pending)
        pending.future.cancel()
        self._abandoned[_key(id)] = pending.method
        while len(self._abandoned) > _ABANDONED_MEMORY:
            self._abandoned.popitem(last=False)
        self.notify("notifications/cancel", {"id": id, "reason": reason})
        self.channel.abandon(id)

    def _encode(self, id: Id, method: str, params: dict[str, Any]) -> bytes:
        try:
            return codec.encode_request(id, method, params)
        except (TypeError, ValueError, OverflowError) as error:
            raise RCPError.invalid_params("params", f"params are not JSON: {error}") from None

    def _refuse_oversized(self, error: dict[str, Any]) -> bool:
        """A line the server could not read has no id, but its size is in ``data.size``:
        the one pending call whose line was that long gets the error (issue 35)."""
        data = error.get("data")
        size = data.get("size") if isinstance(data, dict) else None
        if error.get("code") != ErrorCode.PAYLOAD_TOO_LARGE or not isinstance(size, int):
            return False
        # The line on the wire may or may not count its newline.
        matches = [key for key, entry in self._pending.items() if entry.size - size in (0, 1)]
        if len(matches) != 1:
            return False
        pending = self._pending.pop(matches[0])
        self._forget_token(pending)
        if not pending.future.done():
            message = str(error.get("message") or "the request is too large")
            pending.future.set_exception(RCPError(ErrorCode.PAYLOAD_TOO_LARGE, message, extra=data))
        return True

    def _forget_token(self, pending: _Pending) -> None:
        if pending.token is not None:
            self._tokens.pop(pending.token, None)

    # --- what the channel hands us (the Receiver protocol) ---

    def deliver(self, message: Message) -> None:
        if isinstance(message, Response):
            self._resolve(message)
        elif isinstance(message, Notification):
            self._notification(message)
        elif isinstance(message, Request):
            log.debug("ignoring a request from the server: %s", message.method)

    def fail(self, id: Id, error: RCPError) -> None:
        pending = self._pending.pop(_key(id), None)
        if pending is None:
            self._abandoned.pop(_key(id), None)
            return
        self._forget_token(pending)
        if not pending.future.done():
            pending.future.set_exception(error)

    def lost(self, reason: str) -> None:
        if self._lost is not None:
            return
        self._lost = reason
        self._gone.set()
        pending, self._pending = self._pending, {}
        self._tokens.clear()
        for entry in pending.values():
            if not entry.future.done():
                entry.future.set_exception(TransportClosed(reason))

    def _resolve(self, response: Response) -> None:
        if response.id is None:
            error = response.error or {}
            if not self._refuse_oversized(error):
                log.warning("server error with no id: %s", error.get("message", error))
            return
        key = _key(response.id)
        pending = self._pending.pop(key, None)
        if pending is None:
            if self._abandoned.pop(key, None) is None:
                log.warning("discarding an answer to unknown id %r", response.id)
            return  # §13.1: a late answer to an abandoned call is discarded cleanly
        self._forget_token(pending)
        if pending.future.done():
            return
        if response.error is not None:
            pending.future.set_exception(RCPError.from_wire(response.error))
        else:
            pending.future.set_result(response.result)

    def _notification(self, notification: Notification) -> None:
        params = notification.params
        if notification.method == "notifications/progress":
            pending = self._tokens.get(_token_of(params.get("progressToken")))
            progress = _parse(m.ProgressParams, params)
            # §9: a frame bearing an unknown token is ignored.
            if pending is not None and pending.on_progress is not None and progress is not None:
                _safely(pending.on_progress, progress)
        elif notification.method == "notifications/log":
            event = _parse(m.LogParams, params)
            if event is None:
                return
            meta = params.get("_meta")
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            pending = self._tokens.get(_token_of(token))
            callback = pending.on_log if pending is not None else None
            callback = callback or self._on_log
            if callback is not None:
                _safely(callback, event)
        # §4.5: any other notification is silently ignored.

    async def close(self) -> None:
        await self.channel.close()
        self.lost("the client was closed")


def _with_meta(params: dict[str, Any], timeout: float | None, token: str | None) -> dict[str, Any]:
    if timeout is None and token is None:
        return params
    raw = params.get("_meta")
    meta: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if timeout is not None:
        # §16.2: the remaining budget in ms (not a clock time); never more than asked for.
        budget = max(1, int(timeout * 1000))
        given = meta.get("deadlineMs")
        if isinstance(given, int | float) and not isinstance(given, bool) and given > 0:
            budget = min(budget, int(given))
        meta["deadlineMs"] = budget
    if token is not None:
        meta["progressToken"] = token
    return {**params, "_meta": meta}


def _token_of(value: object) -> str:
    return value if isinstance(value, str) else ""


def _parse(kind: type[T], params: dict[str, Any]) -> T | None:
    try:
        return msgspec.convert(params, kind, strict=False)
    except msgspec.ValidationError:
        return None


def _safely(callback: Callable[[Any], None], event: Any) -> None:
    # Progress and log are advisory (§9, §17.1): a failing callback must not break a call.
    try:
        callback(event)
    except Exception:
        log.exception("a progress/log callback failed")
