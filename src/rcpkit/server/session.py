"""The session: handshake and lifecycle (§7.1, §13), gating (§7, §12) and params typing.

It knows RCP methods and capabilities, not ids, tasks or bytes: the
dispatcher hands it one request at a time and gets back either an immediate
result (lifecycle methods) or a prepared call to run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rcpkit.codec import MAX_DEPTH, Request
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import MAX_TOKEN_LENGTH
from rcpkit.protocol.errors import ErrorCode, RCPError
from rcpkit.protocol.methods import METHODS, MethodSpec
from rcpkit.protocol.validation import check_depth, parse_params
from rcpkit.server.context import LOG_LEVELS
from rcpkit.server.filters import check_filter
from rcpkit.server.gating import check_options
from rcpkit.server.registration import Registration, Served

__all__ = ["PROTOCOL_VERSION", "Call", "Immediate", "Session"]

# §7.1: the highest protocol version we speak; we support [1 .. PROTOCOL_VERSION].
PROTOCOL_VERSION = 1


@dataclass(slots=True)
class Immediate:
    """A result computed by the session itself, without a handler."""

    result: Any


@dataclass(slots=True)
class Call:
    """A validated, gated request ready for its handler."""

    method: str
    params: Any
    registration: Registration
    notes: list[str]
    filter: Any = None  # the parsed §8 filter of a retrieve, when it carried one
    sent: frozenset[str] = frozenset()  # the wire names of the params the client sent


class Session:
    """One connection's protocol state."""

    def __init__(self, server: Served, *, stateless: bool = False) -> None:
        self.server = server
        # §5.2: a stateless HTTP session is implicitly initialized at the advertised
        # capabilities, and initialize/info are answered idempotently.
        self.stateless = stateless
        self.initialized = stateless
        self.closing = False
        self.protocol_version: int | None = None
        self.client: m.PeerInfo | None = None
        self._client_capabilities: dict[str, Any] = {}
        self._log_threshold = LOG_LEVELS["info"]
        self._logs = False  # the client opted in and we advertise `log`

    # --- what the dispatcher asks ---

    @property
    def streaming(self) -> bool:
        """§9: progress is emitted only when the server advertises ``streaming``."""
        return self.server.capabilities.streaming is not None

    def log_allowed(self, level: str, meta: dict[str, Any]) -> bool:
        """§17.1: logs go only to clients that advertised ``log``, at their level."""
        if not self._logs:
            return False
        threshold = LOG_LEVELS.get(meta.get("logLevel", ""), self._log_threshold)
        return LOG_LEVELS.get(level, 0) >= threshold

    def prepare(self, request: Request) -> Immediate | Call:
        """Gate and validate ``request``; raise RCPError for any refusal."""
        method = request.method
        spec = METHODS.get(method)
        if spec is None:
            return self._prepare_extension(request)
        if not (spec.before_initialize or self.initialized):
            raise RCPError(ErrorCode.NOT_INITIALIZED, f"`{method}` before initialize")
        if spec.capability is None:
            _check_request(request)
            return Immediate(self._lifecycle(spec, request.params))
        registration = self.server.registration(method)
        if registration is None:
            raise RCPError(
                ErrorCode.CAPABILITY_MISSING, f"capability `{spec.capability}` is not advertised"
            )
        _check_request(request)
        params = parse_params(spec.params, request.params)
        notes: list[str] = []
        served = self.server
        params = check_options(
            method,
            params,
            served.capabilities,
            notes,
            served.unavailable_modalities,
            served.fetchable_uris,
        )
        # §8: before the handler, so every server answers a bad filter the same way.
        tree = check_filter(method, params, served.capabilities, served.declared_array_fields)
        return Call(method, params, registration, notes, tree, frozenset(request.params))

    def _prepare_extension(self, request: Request) -> Call:
        # §6.2: x-<vendor>/<name> methods are gated by an x-<vendor> capability;
        # anything else unknown is -32004, which wins over -32003 (§12).
        registration = self.server.registration(request.method)
        if registration is None:
            raise RCPError(ErrorCode.UNKNOWN_METHOD, f"unknown method `{request.method}`")
        if not self.initialized:
            raise RCPError(ErrorCode.NOT_INITIALIZED, f"`{request.method}` before initialize")
        _check_request(request)
        params = {key: value for key, value in request.params.items() if key != "_meta"}
        return Call(request.method, params, registration, [])

    # --- lifecycle methods (§7.1, §7.2, §7.12, §7.15) ---

    def _lifecycle(self, spec: MethodSpec, raw: dict[str, Any]) -> Any:
        params = parse_params(spec.params, raw)
        if isinstance(params, m.InitializeParams):
            return self._initialize(params, raw)
        if isinstance(params, m.PingParams):
            # §7.15: echo any nonce verbatim.
            return {} if params.nonce is None else {"nonce": params.nonce}
        if spec.name == "shutdown":
            self.closing = True
            return {}
        return self.server.info_result()  # §13.2: same capabilities as initialize

    def _initialize(self, params: m.InitializeParams, raw: dict[str, Any]) -> Any:
        if self.initialized and not self.stateless:
            # §13: re-negotiating would invalidate every cached capability.
            raise RCPError(ErrorCode.INVALID_REQUEST, "already initialized")
        version = min(params.protocol_version, PROTOCOL_VERSION)
        if version < 1:
            # §7.1 and §13: a failed negotiation leaves the session uninitialized.
            raise RCPError(
                ErrorCode.VERSION_MISMATCH,
                f"no common protocol version (server supports 1..{PROTOCOL_VERSION})",
                extra={"supported": [1, PROTOCOL_VERSION]},
            )
        self.initialized = True
        self.protocol_version = version
        self.client = params.client
        self._client_capabilities = params.capabilities or {}
        self._logs = self.server.capabilities.log is not None and "log" in self._client_capabilities
        meta = raw.get("_meta")
        if isinstance(meta, dict) and meta.get("logLevel") in LOG_LEVELS:
            self._log_threshold = LOG_LEVELS[meta["logLevel"]]
        return self.server.info_result(version)


def _check_request(request: Request) -> None:
    # §15.5: bound nesting before any recursive code sees params (else RecursionError).
    if not request.shallow:
        check_depth(request.params, MAX_DEPTH)
    meta = request.meta
    for key in _KEPT_META:
        value = meta.get(key)
        if isinstance(value, str) and len(value) > MAX_TOKEN_LENGTH:
            # §15.5: a client-chosen string the server keeps (a progress token for
            # the request's life, an idempotency key for days) is bounded.
            raise RCPError.invalid_params(
                f"_meta.{key}", f"`_meta.{key}` is longer than {MAX_TOKEN_LENGTH} characters"
            )


_KEPT_META = ("progressToken", "idempotencyKey")
