"""The dispatcher: ids, concurrency, cancellation, deadlines, batches and progress.

One task per request (STYLE §5). Requests are answered as soon as they finish,
in any order (§4.7); a request is answered exactly once (§13.1): the task that
runs it is the only writer of its response, and cancellation or a deadline
only changes *what* that task writes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, TypeGuard

from rcpkit import codec
from rcpkit.codec import Batch, Frame, Invalid, Notification, Request
from rcpkit.observe.observer import Observer
from rcpkit.protocol.base import Id
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.methods import METHODS
from rcpkit.server.context import LogLevel, RequestContext
from rcpkit.server.limits import (
    DEFAULT_DEADLINE_SECONDS,
    DEFAULT_MAX_IN_FLIGHT,
    DEFAULT_WRITE_DEADLINE_SECONDS,
    IN_FLIGHT_RETRY_AFTER_MS,
)
from rcpkit.server.session import Call, Immediate, Session

__all__ = ["DEFAULT_DEADLINE", "DEFAULT_MAX_BATCH", "Dispatcher"]

log = logging.getLogger("rcpkit.server")

DEFAULT_MAX_BATCH = 1024
# §13.1, §15.5: the server's own per-request deadline (seconds) when the operator
# sets none (writes get at least DEFAULT_WRITE_DEADLINE_SECONDS, for a large
# index/add); one definition for every transport, in rcpkit.server.limits.
DEFAULT_DEADLINE = DEFAULT_DEADLINE_SECONDS

Reply = Callable[[bytes], None]


@dataclass(slots=True)
class _InFlight:
    task: asyncio.Task[None]
    context: RequestContext


class Dispatcher:
    """Runs the requests of one session: submit frames, cancel by id, finish in flight.

    It reads nothing itself: a runner (``rcpkit.server.runner.pump`` for a byte
    stream, the HTTP exchange for request bodies) submits each decoded frame with
    the sinks its answers go to. The tasks it starts are its own, one per request;
    ``finish`` waits for them all.
    """

    def __init__(
        self,
        session: Session,
        *,
        executor: Executor | None = None,
        deadline: float | None = None,
        write_deadline: float | None = DEFAULT_WRITE_DEADLINE_SECONDS,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_in_flight: int | None = DEFAULT_MAX_IN_FLIGHT,
        tenant: str | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.session = session
        # Counts, times and logs every answered request (metrics, access log, trace id).
        self._observer = observer
        self._executor = executor
        self._deadline = deadline
        # §13.1: writes get the longer of the two (None: no deadline at all).
        self._write_deadline = (
            None if deadline is None else max(deadline, write_deadline or deadline)
        )
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        # Who the transport authenticated the peer as; handlers read ``ctx.tenant``.
        self._tenant = tenant
        self._inflight: dict[tuple[type, Id], _InFlight] = {}
        # The loop submit runs on: progress from worker threads is posted to it.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    @property
    def closing(self) -> bool:
        """§13.1: after shutdown nothing more is processed; the runner stops reading."""
        return self.session.closing

    async def finish(self) -> None:
        """§5.1/§13.1: on shutdown or end of input, in-flight requests finish and answer."""
        while self._inflight:
            await asyncio.gather(
                *(entry.task for entry in list(self._inflight.values())), return_exceptions=True
            )

    # --- frames ---

    def submit(self, frame: Frame, reply: Reply, notify: Reply | None = None) -> None:
        """Handle one frame; its response(s) go to ``reply``, its progress/log to ``notify``.

        Called on the event loop. A byte stream passes its ``send`` once; HTTP
        passes each exchange's own sinks. ``notify`` defaults to ``reply``.
        """
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()
        notify = notify or reply
        if isinstance(frame, Request):
            self._start(frame, reply, notify)
        elif isinstance(frame, Notification):
            self._notify(frame)
        elif isinstance(frame, Invalid):
            reply(codec.encode_error(frame.id, frame.error))
        elif isinstance(frame, Batch):
            self._accept_batch(frame, reply, notify)
        # A Response is ignored: this server sends no requests.

    def _accept_batch(self, batch: Batch, reply: Reply, notify: Reply) -> None:
        members = batch.members
        if len(members) > self._max_batch:
            # §11: a server may cap batch size and reject an oversized batch.
            error = RCPError(
                ErrorCode.INVALID_PARAMS,
                f"batch of {len(members)} exceeds the limit of {self._max_batch}",
                field="batch",
                extra={"limit": self._max_batch},
            )
            reply(codec.encode_error(None, error))
            return
        expected = sum(isinstance(member, Request | Invalid) for member in members)
        answers: list[bytes] = []

        def collect(data: bytes) -> None:
            answers.append(data)
            if len(answers) == expected:
                reply(codec.encode_batch(answers))

        for member in members:
            if isinstance(member, Request):
                self._start(member, collect, notify)
            elif isinstance(member, Invalid):
                collect(codec.encode_error(member.id, member.error))
            elif isinstance(member, Notification):
                self._notify(member)

    @property
    def in_flight(self) -> int:
        """Requests started and not yet answered."""
        return len(self._inflight)

    # --- notifications (§4.5, §7.14) ---

    def _notify(self, notification: Notification) -> None:
        # §4.5: never answered, known or unknown.
        if notification.method != "notifications/cancel":
            return
        target = notification.params.get("id")
        if codec.is_id(target):
            self.cancel(target)

    def cancel(self, id: Id) -> bool:
        """Cancel the in-flight request ``id`` (its client went away, or asked).

        It is still answered once, with -32006; unknown or answered ids are a
        no-op (§7.14). True when a request was cancelled.
        """
        entry = self._inflight.get((type(id), id))
        if entry is None:
            return False
        entry.context.stop(ErrorCode.CANCELLED)
        # Not task.cancel() directly: a task cancelled before its first step never
        # runs _run, so it would never answer. Scheduled, the cancel lands after
        # that first step, inside _run, which answers -32006 (or the result).
        asyncio.get_running_loop().call_soon(entry.task.cancel)
        return True

    # --- requests ---

    def _start(self, request: Request, reply: Reply, notify: Reply) -> None:
        if self._observer is not None:
            reply = self._observer.wrap(request, self._tenant, reply)
        if request.method.startswith("notifications/"):
            # §7.14/§4.5: a notification carrying an id is malformed.
            reply(_error(request.id, ErrorCode.INVALID_REQUEST, "a notification carries no `id`"))
            return
        key = (type(request.id), request.id)
        if key in self._inflight:
            reply(_error(request.id, ErrorCode.INVALID_REQUEST, "`id` is already in flight"))
            return
        try:
            prepared = self.session.prepare(request)
        except RCPError as error:
            reply(codec.encode_error(request.id, error))
            return
        except Exception:
            log.exception("preparing %s failed", request.method)
            reply(_error(request.id, ErrorCode.INTERNAL_ERROR, "internal error"))
            return
        if isinstance(prepared, Immediate):
            reply(_encode_result(request.id, prepared.result))
            return
        context = self._context(request, prepared, notify)
        if prepared.registration.mode == "inline":
            reply(self._run_inline(request.id, prepared, context))
            return
        if self._max_in_flight is not None and len(self._inflight) >= self._max_in_flight:
            # §12/§15.5: shed load instead of queueing without bound; retryable.
            reply(codec.encode_error(request.id, _busy(self._max_in_flight)))
            return
        task = asyncio.get_running_loop().create_task(
            self._run(request.id, prepared, context, reply)
        )
        self._inflight[key] = _InFlight(task, context)

    def _run_inline(self, id: Id, call: Call, context: RequestContext) -> bytes:
        try:
            result = call.registration.handler(*_arguments(call, context))
        except Exception as error:
            return _failure(id, call.method, error)
        finally:
            context.answered = True
        return _encode_result(id, result)

    async def _run(self, id: Id, call: Call, context: RequestContext, reply: Reply) -> None:
        started = time.perf_counter()
        scope = asyncio.timeout(context.remaining())
        try:
            async with scope:
                result = await self._invoke(call, context)
        except asyncio.CancelledError:
            message = _error(id, ErrorCode.CANCELLED, "cancelled")
            if not context.cancelled:
                # Torn down from outside (loop closing): still answer, then stop.
                self._answer(id, context, message, reply)
                raise
        except TimeoutError as error:
            if scope.expired():
                context.stop(ErrorCode.TIMEOUT)  # a worker thread stops at its checkpoint
                message = _error(id, ErrorCode.TIMEOUT, "deadline exceeded")
            else:
                message = _failure(id, call.method, error)
        except Exception as error:
            message = _failure(id, call.method, error)
        else:
            _log_outcome(call.method, context, started)
            message = _encode_result(id, result)
        self._answer(id, context, message, reply)

    def _answer(self, id: Id, context: RequestContext, message: bytes, reply: Reply) -> None:
        self._inflight.pop((type(id), id), None)
        context.answered = True
        reply(message)

    async def _invoke(self, call: Call, context: RequestContext) -> Any:
        registration = call.registration
        arguments = _arguments(call, context)
        if registration.mode == "async":
            return await registration.handler(*arguments)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, functools.partial(registration.handler, *arguments)
        )

    # --- per-request context: deadline (§13.1), progress (§9), log (§17.1) ---

    def _context(self, request: Request, call: Call, notify: Reply) -> RequestContext:
        meta = request.meta
        token = meta.get("progressToken")
        progress = None
        if self.session.streaming and _is_token(token):
            progress = functools.partial(self._progress, token)
        logs = self.session.log_allowed("error", meta)
        context = RequestContext(
            request.id,
            request.method,
            meta,
            deadline=self._deadline_of(meta, request.method),
            progress=progress,
            log=self._log if logs else None,
            tenant=self._tenant,
        )
        context.notes.extend(call.notes)
        context.filter = call.filter
        context.sent = call.sent
        context.sink = notify
        return context

    def _deadline_of(self, meta: dict[str, Any], method: str) -> float | None:
        spec = METHODS.get(method)
        budget = self._write_deadline if spec is not None and spec.writes else self._deadline
        if budget is None and "deadlineMs" not in meta:
            return None
        requested = meta.get("deadlineMs")
        if isinstance(requested, int | float) and not isinstance(requested, bool) and requested > 0:
            seconds = float(requested) / 1000.0
            budget = seconds if budget is None else min(budget, seconds)
        if budget is None:
            return None
        return time.monotonic() + budget

    def _progress(
        self,
        token: str | int,
        context: RequestContext,
        progress: float,
        stage: str | None,
        message: str | None,
        partial: dict[str, Any] | None,
    ) -> None:
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if stage is not None:
            params["stage"] = stage
        if message is not None:
            params["message"] = message
        if partial is not None:
            params["partial"] = partial
        self._emit(context, "notifications/progress", params)

    def _log(
        self,
        context: RequestContext,
        level: LogLevel,
        message: str,
        data: dict[str, Any] | None,
        logger: str | None,
    ) -> None:
        if not self.session.log_allowed(level, context.meta):
            return
        params: dict[str, Any] = {"level": level, "message": message}
        if logger is not None:
            params["logger"] = logger
        if data is not None:
            params["data"] = data
        token = context.meta.get("progressToken")
        if _is_token(token):
            params["_meta"] = {"progressToken": token}
        self._emit(context, "notifications/log", params)

    def _emit(self, context: RequestContext, method: str, params: dict[str, Any]) -> None:
        try:
            data = codec.encode_notification(method, params)
        except (TypeError, ValueError, OverflowError):
            log.warning("dropped an unencodable %s frame", method)
            return
        if threading.get_ident() == self._loop_thread:
            self._send_notification(context, data)
        elif self._loop is not None:
            self._loop.call_soon_threadsafe(self._send_notification, context, data)

    def _send_notification(self, context: RequestContext, data: bytes) -> None:
        # §9: nothing about a request goes out after its final response.
        if not context.answered and context.sink is not None:
            context.sink(data)


def _log_outcome(method: str, context: RequestContext, started: float) -> None:
    """§17.1: what every handler's request did, for a client that opted into logs.

    Before the response (nothing about a request follows it, §9); a no-op unless
    the server advertises ``log`` and the client asked for it at this level.
    """
    for note in context.notes:  # a fallback or clamp the server applied (§7.7)
        context.log("notice", note, logger="rcpkit.server")
    latency = round((time.perf_counter() - started) * 1000, 3)
    context.log(
        "debug", f"{method} answered in {latency} ms", {"latencyMs": latency}, "rcpkit.server"
    )


def _arguments(call: Call, context: RequestContext) -> tuple[Any, ...]:
    return (call.params, context) if call.registration.takes_context else (call.params,)


def _is_token(token: object) -> TypeGuard[str | int]:
    # §9: a progress token is a string or an integer.
    return isinstance(token, str | int) and not isinstance(token, bool)


def _busy(limit: int) -> RCPError:
    return RCPError(
        ErrorCode.RATE_LIMITED,
        f"{limit} requests already in flight on this connection",
        retryable=True,
        retry_after_ms=IN_FLIGHT_RETRY_AFTER_MS,
        extra={"limit": limit},
    )


def _error(id: Id | None, code: ErrorCode, message: str) -> bytes:
    return codec.encode_error(id, RCPError(code, message))


def _encode_result(id: Id, result: Any) -> bytes:
    try:
        return codec.encode_result(id, {} if result is None else result)
    except (TypeError, ValueError, OverflowError, UnicodeError):
        log.exception("result of request %r could not be encoded", id)
        return _error(id, ErrorCode.INTERNAL_ERROR, "internal error: unencodable result")


def _failure(id: Id, method: str, error: BaseException) -> bytes:
    """STYLE §3: the one place an exception becomes a wire error."""
    if isinstance(error, RCPError):
        return codec.encode_error(id, error)
    # Unexpected: log it with its traceback on stderr, never on the wire.
    log.error("handler for %s failed", method, exc_info=error)
    return _error(id, ErrorCode.INTERNAL_ERROR, "internal error")
