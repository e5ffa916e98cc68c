"""How an integration reaches an RCP server: a stdio command, an HTTP URL, or a registry entry.

One :class:`Connection` holds one initialized :class:`~rcpkit.client.Client` on a
private event-loop thread. Blocking framework calls wait on it through the
:class:`~rcpkit.client.SyncClient` facade; ``async`` framework calls await the
same coroutine from their own loop (:meth:`Connection.run`) without blocking a
worker thread. Both paths therefore share one session and, over stdio, one
server process. The connection opens on first use, so a framework may build
(and copy, or validate) its retriever without starting anything.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rcpkit.client import CapabilityMissing, Client, SyncClient
from rcpkit.client.sync import LoopThread
from rcpkit.federation import connect_engine, load_registry
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Connection", "Source", "connection_from"]

T = TypeVar("T")

# rcpkit's vendor extension (§6.2) and its method reading one stored document.
_EXTENSION = "x-rcpkit"
_DOCUMENT = f"{_EXTENSION}/document"
_STATS = f"{_EXTENSION}/stats"

# The environment a spawned engine needs to find its index, model and Python path.
DEFAULT_PASS_ENV: tuple[str, ...] = (
    "RCPKIT_INDEX",
    "RCPKIT_EMBEDDER",
    "RCPKIT_SPARSE",
    "RCPKIT_READ_ONLY",
    "RCPKIT_STORE",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "XDG_DATA_HOME",
)


@dataclass(frozen=True, slots=True)
class Source:
    """Where the server is: exactly one of ``command``, ``url`` or ``registry``.

    ``registry`` is an ``rcp.json`` (§16.1) and ``engine`` the id of its entry
    (default: the entry of highest priority). The token of a registry's HTTP
    engine comes from the variable its ``tokenEnv`` names, never from here.
    """

    command: tuple[str, ...] = ()
    url: str | None = None
    token: str | None = None
    registry: str | None = None
    engine: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = DEFAULT_PASS_ENV

    def __post_init__(self) -> None:
        given = [bool(self.command), self.url is not None, self.registry is not None]
        if sum(given) != 1:
            raise ValueError("give exactly one of `command`, `url` or `registry`")
        if self.engine is not None and self.registry is None:
            raise ValueError("`engine` names an entry of `registry`; give `registry` too")
        if self.token is not None and self.url is None:
            raise ValueError("`token` is for an HTTP `url`")

    def describe(self) -> str:
        if self.registry is not None:
            return f"{self.registry}#{self.engine or '(first)'}"
        return self.url or " ".join(self.command)

    async def open(self, *, timeout: float | None, connect_timeout: float) -> Client:
        """Connect and run ``initialize`` (bounded by ``connect_timeout``)."""
        if self.url is not None:
            return await Client.connect_http(
                self.url, token=self.token, timeout=timeout, connect_timeout=connect_timeout
            )
        if self.command:
            return await Client.connect_stdio(
                list(self.command),
                cwd=self.cwd,
                env=self.env,
                pass_env=self.pass_env,
                timeout=timeout,
                connect_timeout=connect_timeout,
            )
        assert self.registry is not None
        registry = load_registry(Path(self.registry))
        entries = registry.by_priority()
        chosen = [entry for entry in entries if self.engine in (None, entry.id)]
        if not chosen:
            known = ", ".join(entry.id for entry in entries)
            raise ValueError(f"{self.registry} has no engine `{self.engine}` (it has: {known})")
        return await connect_engine(chosen[0], connect_timeout=connect_timeout, timeout=timeout)


class Connection:
    """One lazily opened RCP session, shared by an integration's sync and async paths."""

    def __init__(
        self, source: Source, *, timeout: float | None = 60.0, connect_timeout: float = 60.0
    ) -> None:
        self.source = source
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._lock = threading.Lock()
        # The blocking client and the loop its async client runs on, set together.
        self._opened: tuple[SyncClient, asyncio.AbstractEventLoop] | None = None
        self._closer: weakref.finalize[Any, Any] | None = None

    @classmethod
    def stdio(cls, command: Sequence[str], **options: Any) -> Connection:
        """A server spawned from ``command``; ``cwd``, ``env``, ``pass_env`` as in Source."""
        keys = {"cwd", "env", "pass_env"}
        source = Source(command=tuple(command), **{k: options.pop(k) for k in keys & set(options)})
        return cls(source, **options)

    @classmethod
    def http(cls, url: str, *, token: str | None = None, **options: Any) -> Connection:
        return cls(Source(url=url, token=token), **options)

    @classmethod
    def registry(cls, path: str | Path, engine: str | None = None, **options: Any) -> Connection:
        return cls(Source(registry=str(path), engine=engine), **options)

    # --- the session ---

    @property
    def client(self) -> SyncClient:
        """The blocking client, connected (``initialize``) on first use."""
        return self._session()[0]

    def _session(self) -> tuple[SyncClient, asyncio.AbstractEventLoop]:
        with self._lock:
            if self._opened is None:
                self._opened = self._open()
            return self._opened

    def _open(self) -> tuple[SyncClient, asyncio.AbstractEventLoop]:
        runner = LoopThread()
        bound = self.connect_timeout + 5.0
        try:
            opening = self.source.open(timeout=self.timeout, connect_timeout=self.connect_timeout)
            client = runner.run(opening, bound)
        except BaseException:
            runner.stop()
            raise
        blocking = SyncClient(client, runner)
        # A connection dropped without close() still ends its server and its thread.
        self._closer = weakref.finalize(self, blocking.close)
        return blocking, runner.loop

    @property
    def capabilities(self) -> Mapping[str, Any]:
        """What the server advertised at ``initialize`` (§13.2: fixed for the session)."""
        return self.client.raw_capabilities

    def require(self, method: str, capability: str) -> Mapping[str, Any]:
        """The advertised ``capability`` block, or CapabilityMissing naming it (§14.4)."""
        block = self.capabilities.get(capability)
        if block is None:
            raise CapabilityMissing(method, capability)
        return block if isinstance(block, Mapping) else {}

    def call(self, work: Callable[[SyncClient], T]) -> T:
        """Run ``work`` against the blocking client."""
        return work(self.client)

    def documents(self, ids: Sequence[str]) -> list[dict[str, Any]] | None:
        """The stored documents among ``ids`` (``id``, ``text``, ``title``, ``uri``,
        ``meta``), in their order, absent ones skipped; None when the server cannot
        fetch a document by id (it does not advertise ``x-rcpkit/document``).

        §7 has no "get by id"; rcpkit's vendor method (§6.2) reads one document, so
        this reads those ids only, never a listing of the index.
        """
        if not self._offers(_DOCUMENT):
            return None
        found = (self._document(name) for name in dict.fromkeys(ids))
        return [document for document in found if document is not None]

    def count_documents(self) -> int | None:
        """How many documents the caller's index holds (``x-rcpkit/stats``, its tenant's
        alone, §15.6); None when the server does not offer it (only a listing counts)."""
        if not self._offers(_STATS):
            return None
        return int(self.client.call(_STATS, {})["documents"])

    def filter_fields(self) -> Mapping[str, Any]:
        """The metadata fields a §8 filter may name, with their types (§8 ``fields``)."""
        block = self.capabilities.get("filter")
        fields = block.get("fields") if isinstance(block, Mapping) else None
        return fields if isinstance(fields, Mapping) else {}

    def _offers(self, method: str) -> bool:
        block = self.capabilities.get(_EXTENSION)
        methods = block.get("methods") if isinstance(block, Mapping) else None
        return isinstance(methods, list) and method in methods

    def _document(self, name: str) -> dict[str, Any] | None:
        try:
            first = self.client.call(_DOCUMENT, {"id": name})
        except RCPError as error:
            if error.code == ErrorCode.INVALID_PARAMS and error.field == "id":
                return None  # no such document (§15.6: or another tenant's)
            raise
        text = first["text"]
        # §15.5: one answer carries a bounded slice of the text; `start` pages on.
        while len(text) < first["length"]:
            text += self.client.call(_DOCUMENT, {"id": name, "start": len(text)})["text"]
        fields = ("id", "title", "uri", "meta")
        return {**{key: first.get(key) for key in fields}, "text": text}

    async def run(self, work: Callable[[Client], Coroutine[Any, Any, T]]) -> T:
        """Await ``work(client)`` from any event loop; it runs on the connection's own loop.

        Cancelling the awaiting task cancels the call, which sends
        ``notifications/cancel`` (§7.14).
        """
        opened = self._opened
        if opened is None:  # the first call connects off this loop, never blocking it
            opened = await asyncio.to_thread(self._session)
        blocking, loop = opened
        future = asyncio.run_coroutine_threadsafe(work(blocking.client), loop)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """``shutdown`` and close (a spawned server exits); a later call reconnects."""
        with self._lock:
            closer, self._closer, self._opened = self._closer, None, None
        if closer is not None:
            closer()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Connection({self.source.describe()!r})"


def connection_from(
    connection: Connection | None,
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    token: str | None = None,
    registry: str | None = None,
    engine: str | None = None,
    timeout: float | None = 60.0,
) -> Connection:
    """The connection an integration was given, or one built from its shorthand fields."""
    if connection is not None:
        # A token or engine beside a connection would be ignored: the connection has its own.
        if command or any(value is not None for value in (url, token, registry, engine)):
            raise ValueError("give either `connection` or `command`/`url`/`registry`, not both")
        return connection
    if not command and url is None and registry is None:
        raise ValueError("give `connection`, or one of `command`, `url` or `registry`")
    source = Source(
        command=tuple(command or ()), url=url, token=token, registry=registry, engine=engine
    )
    return Connection(source, timeout=timeout)
