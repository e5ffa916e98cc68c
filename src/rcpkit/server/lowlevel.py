"""The low-level server: typed handlers in, capabilities derived from what is registered.

>>> server = Server("my-engine", "1.0")
>>> server.handle("retrieve", retrieve, capability=RetrieveCapability(max_k=50, modes=["sparse"]))
>>> asyncio.run(server.serve_stdio())
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import msgspec

from rcpkit.protocol import capabilities as caps
from rcpkit.protocol.base import Wire
from rcpkit.protocol.messages import index_document_extension, retrieve_params_extension
from rcpkit.protocol.methods import METHODS
from rcpkit.server.registration import HandlerMode, Registration
from rcpkit.server.runner import serve_stdio

__all__ = ["HandlerMode", "Registration", "Server", "conformance_level"]


class Server:
    """A server identity plus handlers; each connection gets its own Session."""

    def __init__(self, name: str, version: str, *, read_only: bool = False) -> None:
        self.name = name
        self.version = version
        self.read_only = read_only
        self._registrations: dict[str, Registration] = {}
        self._declared: dict[str, Wire] = {}
        self._extensions: dict[str, dict[str, Any]] = {}
        self._capabilities: caps.Capabilities | None = None
        self._info: dict[str, Any] | None = None
        self._unavailable: dict[str, str] = {}
        self._fetchable: tuple[str, ...] = ()
        self._arrays: frozenset[str] | None = None

    # --- registration ---

    def handle(
        self,
        method: str,
        handler: Callable[..., Any],
        *,
        capability: Wire | dict[str, Any] | None = None,
        mode: HandlerMode | None = None,
    ) -> None:
        """Register ``handler`` for ``method``, with its capability metadata.

        ``capability`` is the value advertised under the method's capability key
        (e.g. ``RetrieveCapability`` for ``retrieve``); methods sharing a key
        (``index/add`` and ``index/delete``) need it once.
        """
        self._check_open()
        spec = METHODS.get(method)
        if spec is None and not method.startswith("x-"):
            raise ValueError(f"`{method}` is not an RCP method (extensions are `x-<vendor>/…`)")
        if spec is not None and spec.capability is None:
            raise ValueError(f"`{method}` is implemented by the runtime itself")
        self._registrations[method] = _registration(handler, mode)
        if spec is None:
            extension = capability if isinstance(capability, dict) else {}
            self._extensions.setdefault(method.split("/", 1)[0], dict(extension))
        elif capability is not None:
            self._declare(spec.capability or "", capability)

    def advertise(self, key: str, value: Wire | dict[str, Any] | None = None) -> None:
        """Advertise a capability that is not a method (``filter``, ``streaming``, …)."""
        self._check_open()
        if key.startswith("x-"):
            self._extensions[key] = dict(value or {}) if isinstance(value, dict | None) else {}
            return
        self._declare(key, value if value is not None else {})

    def unavailable(self, modality: str, reason: str) -> None:
        """Say why ``modality`` is not advertised (a missing extra), §4.8.

        A block of that type is still -32005; its message gives ``reason``, and
        ``initialize``/``info`` list it in ``_meta.unavailableModalities``.
        """
        self._check_open()
        self._unavailable[modality] = reason

    @property
    def unavailable_modalities(self) -> Mapping[str, str]:
        return MappingProxyType(self._unavailable)

    def fetches(self, prefixes: Iterable[str]) -> None:
        """Let a non-text block's ``uri`` under one of ``prefixes`` reach the handler (§4.8).

        The operator's opt-in: the handler fetches it. ``initialize``/``info`` list
        the prefixes in ``_meta.fetchableUris``; every other ``uri`` stays -32602.
        """
        self._check_open()
        self._fetchable = tuple(prefixes)

    @property
    def fetchable_uris(self) -> tuple[str, ...]:
        return self._fetchable

    def array_fields(self, names: Iterable[str]) -> None:
        """Say which filter fields hold arrays (§8): ``contains`` is membership on them.

        An advertisement cannot say it, so without this call the runtime lets
        ``contains`` through on every field; with it, ``contains`` on any other
        field but a ``text`` one is -32602 before the handler runs.
        """
        self._check_open()
        self._arrays = frozenset(names)

    @property
    def declared_array_fields(self) -> frozenset[str] | None:
        """The array fields, or None if the server never said (``contains`` anywhere)."""
        return self._arrays

    def registration(self, method: str) -> Registration | None:
        """The handler for ``method`` if its capability is advertised."""
        registration = self._registrations.get(method)
        if registration is None:
            return None
        if method == "index/add":
            index = self.capabilities.index
            return registration if index is not None and index.writable else None
        return registration

    def read_only_copy(self, writes: Iterable[str]) -> Server:
        """This server without the write methods ``writes``, its index not writable.

        What an unauthenticated HTTP caller is offered (§15.3): the copy derives
        its own capabilities, so no write is advertised (``index`` stays, with
        ``writable: false``, as long as ``index/add`` is registered).
        """
        copy = Server(self.name, self.version, read_only=True)
        dropped = set(writes) - {"index/add"}  # kept: it carries the index capability
        copy._registrations = {
            method: registration
            for method, registration in self._registrations.items()
            if method not in dropped
        }
        copy._declared = dict(self._declared)
        copy._extensions = {key: dict(value) for key, value in self._extensions.items()}
        copy._unavailable = dict(self._unavailable)
        copy._fetchable = self._fetchable
        copy._arrays = self._arrays
        return copy

    # --- derived capabilities (STYLE §6: never kept by hand in a second place) ---

    @property
    def capabilities(self) -> caps.Capabilities:
        """The advertised set; fixed once the first session reads it (§13.2)."""
        if self._capabilities is None:
            self._capabilities = self._derive()
        return self._capabilities

    def info_result(self, version: int = 1) -> dict[str, Any]:
        """The ``initialize``/``info`` result (§7.1, §7.2, §14 ``_meta.conformance``)."""
        if self._info is None:
            wire = self.capabilities.to_wire()
            wire.update(self._extensions)
            self._info = {
                "server": {"name": self.name, "version": self.version},
                "capabilities": wire,
                "_meta": {"conformance": conformance_level(self.capabilities)},
            }
            if self._unavailable:
                self._info["_meta"]["unavailableModalities"] = dict(self._unavailable)
            if self._fetchable:
                self._info["_meta"]["fetchableUris"] = list(self._fetchable)
            if "index/add" in self._registrations:
                self._info["_meta"]["indexDocument"] = index_document_extension()
            if "retrieve" in self._registrations:  # §4.4: a declared extension, not a guess
                self._info["_meta"]["retrieveParams"] = retrieve_params_extension()
        return {"protocolVersion": version, **self._info}

    def _derive(self) -> caps.Capabilities:
        present: dict[str, Wire] = {}
        for method in self._registrations:
            spec = METHODS.get(method)
            if spec is None or spec.capability is None:
                continue
            key = spec.capability
            if key not in present:
                declared = self._declared.get(key)
                present[key] = (
                    declared if declared is not None else _default_capability(key, method)
                )
        for key, value in self._declared.items():
            if key not in present and METHODS_BY_CAPABILITY.get(key) is None:
                present[key] = value
        if "index" in present:
            index = present["index"]
            assert isinstance(index, caps.IndexCapability)
            writable = "index/add" in self._registrations and not self.read_only
            present["index"] = msgspec.structs.replace(index, writable=writable)
        attributes: dict[str, Any] = {_ATTRIBUTE_OF[key]: value for key, value in present.items()}
        return caps.Capabilities(**attributes)

    def _declare(self, key: str, value: Wire | dict[str, Any]) -> None:
        capability_type = CAPABILITY_TYPES.get(key)
        if capability_type is None:
            raise ValueError(f"`{key}` is not an RCP capability (extensions are `x-<vendor>`)")
        if isinstance(value, dict):
            value = msgspec.convert(value, capability_type)
        if not isinstance(value, capability_type):
            raise TypeError(f"capability `{key}` takes {capability_type.__name__}")
        self._declared[key] = value

    def _check_open(self) -> None:
        if self._capabilities is not None:
            raise RuntimeError("capabilities are fixed once a session has started (§13.2)")

    # --- serving ---

    async def serve_stdio(self, **options: Any) -> None:
        """Serve one session on this process's stdin/stdout until shutdown or EOF."""
        await serve_stdio(self, **options)


def _registration(handler: Callable[..., Any], mode: HandlerMode | None) -> Registration:
    is_async = inspect.iscoroutinefunction(handler)
    if mode is None:
        mode = "async" if is_async else "thread"
    elif (mode == "async") != is_async:
        raise TypeError("mode 'async' is for coroutine functions, 'thread'/'inline' for plain ones")
    parameters = [
        p
        for p in inspect.signature(handler).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return Registration(handler, mode, takes_context=len(parameters) >= 2)


def _capability_types() -> dict[str, type[Wire]]:
    types: dict[str, type[Wire]] = {}
    for field in msgspec.structs.fields(caps.Capabilities):
        (member,) = (arg for arg in field.type.__args__ if arg is not type(None))
        types[field.encode_name] = member
    return types


CAPABILITY_TYPES = _capability_types()
_ATTRIBUTE_OF = {f.encode_name: f.name for f in msgspec.structs.fields(caps.Capabilities)}
METHODS_BY_CAPABILITY: dict[str, list[str]] = {}
for _spec in METHODS.values():
    if _spec.capability is not None:
        METHODS_BY_CAPABILITY.setdefault(_spec.capability, []).append(_spec.name)


def _default_capability(key: str, method: str) -> Wire:
    if key == "index":
        return caps.IndexCapability(writable=False)
    try:
        return CAPABILITY_TYPES[key]()
    except TypeError:
        raise ValueError(
            f"`{method}` needs its `{key}` capability metadata (required fields)"
        ) from None


def conformance_level(capabilities: caps.Capabilities) -> str:
    """§14: the highest level these capabilities can honestly claim.

    L1 needs retrieve with dense, sparse and hybrid plus filter and citations;
    L2 needs L1 and at least three of the §14.3 SOTA surfaces.
    """
    retrieve = capabilities.retrieve
    modes = set(retrieve.modes or []) if retrieve is not None else set()
    if not (
        {"dense", "sparse", "hybrid"} <= modes
        and capabilities.filter is not None
        and capabilities.citations is not None
    ):
        return "L0"
    assert retrieve is not None
    sota = [
        capabilities.rerank,
        capabilities.multi_vector,
        capabilities.sparse_embed,
        capabilities.transform,
        capabilities.graph,
        capabilities.streaming,
        capabilities.pagination,
        capabilities.log,
        retrieve.deterministic or retrieve.snapshots or None,
    ]
    return "L2" if sum(item is not None for item in sota) >= 3 else "L1"
