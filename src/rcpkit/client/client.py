"""The async client: connect (``initialize``), gate, call with retries, stream, close.

>>> async with await Client.connect_stdio(["rcpkit", "serve", "--engine", "keyword"]) as client:
...     result = await client.retrieve("reciprocal rank fusion", k=3)
...     print([hit.id for hit in result.hits])
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import msgspec

import rcpkit
from rcpkit.client.api import TypedMethods
from rcpkit.client.channel import Channel
from rcpkit.client.connection import Connection, LogCallback, SentCallback
from rcpkit.client.errors import MalformedResult, TransportClosed, VersionUnsupported
from rcpkit.client.gating import check_call
from rcpkit.client.http import HttpEndpoint
from rcpkit.client.options import CallOptions
from rcpkit.client.retry import RetryPolicy
from rcpkit.client.stdio import StderrMode, StdioEndpoint
from rcpkit.client.streaming import StreamingCall
from rcpkit.client.wire import (
    BY_PARAMS,
    Endpoint,
    open_channel,
    parse_result,
    to_wire,
    typed_capabilities,
)
from rcpkit.protocol import messages as m
from rcpkit.protocol.base import Wire
from rcpkit.protocol.capabilities import Capabilities
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "MAX_PROTOCOL_VERSION", "MIN_PROTOCOL_VERSION", "Client"]

# Spawning a server and having its initialize answered: a server importing its
# model stack took 10-11 s to answer on a loaded machine (issue 52), so a 10 s
# wall refused a normal start. A server that never answers still fails, in a minute.
DEFAULT_CONNECT_TIMEOUT = 60.0

# §7.1: this client speaks the contiguous range [MIN .. MAX].
MIN_PROTOCOL_VERSION = 1
MAX_PROTOCOL_VERSION = 1

R = TypeVar("R", bound=Wire)


class Client(TypedMethods):
    """One initialized connection to one RCP server."""

    def __init__(
        self,
        connection: Connection,
        *,
        timeout: float | None = 60.0,
        retry: RetryPolicy | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self._connection = connection
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._client_capabilities = dict(client_capabilities or {"streaming": {}})
        self.protocol_version = 0
        self.server = m.PeerInfo(name="", version="")
        self.raw_capabilities: dict[str, Any] = {}
        self.capabilities = Capabilities()
        self.meta: dict[str, Any] = {}
        self._closed = False

    # --- connecting ---

    @classmethod
    async def connect(
        cls,
        endpoint: Endpoint | Channel,
        *,
        timeout: float | None = 60.0,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        retry: RetryPolicy | None = None,
        on_log: LogCallback | None = None,
    ) -> Client:
        """Open the channel and run ``initialize`` (bounded by ``connect_timeout``)."""
        capabilities: dict[str, Any] = {"streaming": {}}
        if on_log is not None:
            capabilities["log"] = {}  # §7.1/§17.1: logs only for clients that opt in
        connection = Connection(open_channel(endpoint), on_log=on_log)
        client = cls(connection, timeout=timeout, retry=retry, client_capabilities=capabilities)
        try:
            async with asyncio.timeout(connect_timeout):
                await connection.open()
                await client._handshake(connect_timeout)
        except BaseException as error:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.close(), 5.0)
            if isinstance(error, TimeoutError) and not isinstance(error, RCPError):
                raise TransportClosed(
                    f"{connection.channel.description}: no initialize answer within "
                    f"{connect_timeout:g} s"
                ) from None
            raise
        return client

    @classmethod
    async def connect_stdio(
        cls,
        command: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        pass_env: Sequence[str] = (),
        stderr: StderrMode = "capture",
        **options: Any,
    ) -> Client:
        """Spawn ``command`` and connect over its stdio (§5.1).

        The server gets a least-privilege environment (§15.1): ``PATH``,
        ``HOME``, the locale and temp variables, and rcpkit's own settings
        (``RCPKIT_INDEX``, ``RCPKIT_EMBEDDER``, ``RCPKIT_SPARSE``,
        ``RCPKIT_STORE``, ``RCPKIT_READ_ONLY``, ``RCPKIT_LOG_LEVEL``,
        ``XDG_DATA_HOME``), so ``["rcpkit", "serve"]`` opens the index the
        caller's shell would. ``pass_env`` names more variables to copy (e.g.
        ``PYTHONPATH``); ``env`` sets variables last, overriding the inherited
        ones. Tokens and other variables are withheld. With ``stderr="capture"``
        a server that exits early fails the call with the tail of its stderr.
        """
        endpoint = StdioEndpoint(tuple(command), cwd, dict(env or {}), tuple(pass_env), stderr)
        return await cls.connect(endpoint, **options)

    @classmethod
    async def connect_http(
        cls,
        url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        verify: bool | str = True,
        **options: Any,
    ) -> Client:
        """Connect to ``url`` (the base, e.g. ``http://127.0.0.1:8080/rcp``) over HTTP(S)."""
        endpoint = HttpEndpoint(url, token, dict(headers or {}), verify)
        return await cls.connect(endpoint, **options)

    async def _handshake(self, timeout: float | None) -> None:
        params = {
            "protocolVersion": MAX_PROTOCOL_VERSION,
            "client": {"name": "rcpkit", "version": rcpkit.__version__},
            "capabilities": self._client_capabilities,
        }
        self._adopt(await self._connection.request("initialize", params, timeout=timeout))

    def _adopt(self, result: Any) -> None:
        if not isinstance(result, dict):
            raise MalformedResult("initialize", "the result is not an object")
        version = result.get("protocolVersion")
        if (
            not isinstance(version, int)
            or isinstance(version, bool)
            or not MIN_PROTOCOL_VERSION <= version <= MAX_PROTOCOL_VERSION
        ):
            # §7.1: abort rather than speak a dialect we do not implement.
            raise VersionUnsupported(version, (MIN_PROTOCOL_VERSION, MAX_PROTOCOL_VERSION))
        self.protocol_version = version
        server = result.get("server")
        with contextlib.suppress(msgspec.ValidationError):
            self.server = msgspec.convert(server, m.PeerInfo, strict=False)
        raw = result.get("capabilities")
        self.raw_capabilities = dict(raw) if isinstance(raw, dict) else {}
        self.capabilities = typed_capabilities(self.raw_capabilities)
        meta = result.get("_meta")
        self.meta = dict(meta) if isinstance(meta, dict) else {}

    # --- what the server said at initialize (§13.2: fixed for the session) ---

    def supports(self, capability: str) -> bool:
        """Whether the server advertised ``capability`` (wire key, e.g. ``sparseEmbed``)."""
        return capability in self.raw_capabilities

    @property
    def conformance(self) -> str | None:
        """The server's self-declared level (§14 ``_meta.conformance``)."""
        level = self.meta.get("conformance")
        return level if isinstance(level, str) else None

    @property
    def connection(self) -> Connection:
        return self._connection

    @property
    def closed(self) -> bool:
        return self._closed or self._connection.lost_reason is not None

    # --- calls ---

    async def call(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        options: CallOptions | None = None,
        *,
        gate: bool = True,
        on_sent: SentCallback | None = None,
    ) -> Any:
        """Call ``method`` with wire-shaped ``params``; the raw result (§12.2 retries included).

        ``gate=False`` skips client-side gating (to probe a server on purpose).
        """
        options = options or CallOptions()
        wire = dict(params or {})
        if options.meta:
            given = wire.get("_meta")
            wire["_meta"] = {**(given if isinstance(given, dict) else {}), **options.meta}
        if gate:
            wire = check_call(method, wire, self.raw_capabilities)
        return await self._attempts(method, wire, options, on_sent)

    async def _attempts(
        self,
        method: str,
        wire: dict[str, Any],
        options: CallOptions,
        on_sent: SentCallback | None,
    ) -> Any:
        loop = asyncio.get_running_loop()
        budget = options.timeout if options.timeout is not None else self.timeout
        deadline = None if budget is None else loop.time() + budget
        policy = options.retry or self.retry
        listening = options.on_progress is not None or options.on_log is not None
        attempt, renewed = 1, False
        while True:
            remaining = None if deadline is None else max(0.001, deadline - loop.time())
            try:
                return await self._connection.request(
                    method,
                    wire,
                    timeout=remaining,
                    on_progress=options.on_progress,
                    on_log=options.on_log,
                    on_sent=on_sent,
                    want_progress=listening,
                )
            except RCPError as error:
                if (
                    error.code == ErrorCode.NOT_INITIALIZED
                    and not renewed
                    and method != "initialize"
                ):
                    # §12.2: -32001 is retryable after initialize (an expired HTTP session).
                    renewed = True
                    if self._connection.channel.renew():
                        await self._handshake(remaining)
                        continue
                delay = policy.delay(error, attempt, method, wire)
                if delay is None or (deadline is not None and loop.time() + delay >= deadline):
                    raise
                await asyncio.sleep(delay)
                attempt += 1

    async def request(self, params: Wire, options: CallOptions | None = None) -> Wire:
        """Send a typed params struct (``RetrieveParams(...)``); its typed result."""
        spec = BY_PARAMS.get(type(params))
        if spec is None:
            raise TypeError(f"{type(params).__name__} is not the params type of an RCP method")
        return await self._typed(spec.name, params, spec.result, options or CallOptions())

    async def _typed(self, method: str, params: Wire, result: type[R], options: CallOptions) -> R:
        wire = to_wire(method, params)
        return parse_result(method, result, await self.call(method, wire, options))

    def _stream_typed(
        self, method: str, params: Wire, result: type[R], options: CallOptions
    ) -> StreamingCall[R]:
        wire = check_call(method, to_wire(method, params), self.raw_capabilities)  # before I/O
        call: StreamingCall[R] = StreamingCall(self._connection.cancel)
        events = CallOptions(
            options.timeout, options.meta, options.retry, call.on_event, call.on_event
        )

        async def run() -> R:
            raw = await self.call(method, wire, events, gate=False, on_sent=call.on_sent)
            return parse_result(method, result, raw)

        call.start(run())
        return call

    # --- closing ---

    async def close(self) -> None:
        """§7.12: ``shutdown``, then close the channel (EOF, then terminate a process)."""
        if self._closed:
            return
        self._closed = True
        if self._connection.lost_reason is None and self.protocol_version:
            with contextlib.suppress(RCPError):
                await self._connection.request("shutdown", {}, timeout=2.0)
        await self._connection.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
