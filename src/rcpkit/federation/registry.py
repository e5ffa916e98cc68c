"""The static registry of §16.1 (``rcp.json``, or an ``[rcp]`` table in a TOML config).

>>> registry = load_registry("rcp.json")
>>> [engine.id for engine in registry.by_priority()]

Relative ``cwd`` values and the default working directory of stdio engines
are the registry file's folder, so ``["python3", "server.py"]`` next to the
file works from anywhere. Credentials are never stored in the registry: an
HTTP engine names the environment variable holding its token (``tokenEnv``).
``"write": true`` marks the engine a gateway sends writes to by default;
``"discover": true`` an aggregator whose engines are discovered (§16.1).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rcpkit.client.http import HttpEndpoint
from rcpkit.client.stdio import StdioEndpoint

__all__ = ["EngineSpec", "Registry", "RegistryError", "load_registry", "parse_registry"]

Transport = Literal["stdio", "http"]


class RegistryError(ValueError):
    """The registry document is not a valid §16.1 registry; the message names the entry."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """One registry entry. ``weight`` scales fusion (§16.3); ``required`` fails the whole
    federated query when this engine fails (§16.2); higher ``priority`` is tried first."""

    id: str
    transport: Transport
    command: tuple[str, ...] = ()
    url: str | None = None
    priority: int = 0
    weight: float = 1.0
    required: bool = False
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    token_env: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    # The gateway's default target for writes (index/add, index/delete, memory/build).
    write: bool = False
    # An aggregator whose catalog/list engines are asked directly (§16.1 discovery).
    discover: bool = False

    def endpoint(
        self,
        *,
        extra_env: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> StdioEndpoint | HttpEndpoint:
        """How to reach the engine; ``extra_env`` is added to a spawned server's environment."""
        if self.transport == "stdio":
            env = {**self.env, **(extra_env or {})}
            return StdioEndpoint(self.command, self.cwd, env, self.pass_env)
        source = os.environ if environ is None else environ
        token = source.get(self.token_env) if self.token_env else None
        assert self.url is not None
        return HttpEndpoint(self.url, token, dict(self.headers))

    def public_endpoint(self) -> dict[str, Any]:
        """§7.13 ``endpoint``: where a client may connect directly (never env or tokens)."""
        if self.transport == "http":
            return {"transport": "http", "url": self.url}
        return {"transport": "stdio", "command": list(self.command)}


@dataclass(frozen=True, slots=True)
class Registry:
    engines: tuple[EngineSpec, ...]
    source: str = "<registry>"
    folder: Path | None = None

    def get(self, id: str) -> EngineSpec | None:
        return next((engine for engine in self.engines if engine.id == id), None)

    def by_priority(self) -> list[EngineSpec]:
        """Highest priority first; ties keep registry order."""
        return sorted(self.engines, key=lambda engine: -engine.priority)


def load_registry(path: str | Path) -> Registry:
    """Read ``rcp.json`` (or a ``.toml`` file with an ``[rcp]`` table)."""
    path = Path(path).resolve()
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise RegistryError(f"{path}: cannot read the registry: {error.strerror}") from None
    try:
        if path.suffix == ".toml":
            document: Any = tomllib.loads(raw.decode("utf-8")).get("rcp", {})
        else:
            document = json.loads(raw)
    except (ValueError, UnicodeError) as error:
        kind = path.suffix.lstrip(".") or "JSON"
        raise RegistryError(f"{path}: not valid {kind}: {error}") from None
    return parse_registry(document, folder=path.parent, source=str(path))


def parse_registry(
    document: Any, *, folder: Path | None = None, source: str = "<registry>"
) -> Registry:
    """Validate a decoded registry document; unknown keys (``$schema``, …) are ignored."""
    if not isinstance(document, Mapping) or not isinstance(document.get("engines"), list):
        raise RegistryError(f"{source}: a registry is an object with an `engines` array")
    engines: list[EngineSpec] = []
    for index, entry in enumerate(document["engines"]):
        engine = _engine(entry, f"{source}: engines[{index}]", folder)
        if any(known.id == engine.id for known in engines):
            raise RegistryError(f"{source}: engines[{index}]: duplicate id {engine.id!r}")
        engines.append(engine)
    return Registry(tuple(engines), source, folder)


def _engine(entry: Any, where: str, folder: Path | None) -> EngineSpec:
    if not isinstance(entry, Mapping):
        raise RegistryError(f"{where}: an engine entry is an object")
    read = _Reader(entry, where)
    id = read.string("id", required=True)
    transport = read.string("transport", required=True)
    if transport not in ("stdio", "http"):
        raise RegistryError(f"{where}.transport: 'stdio' or 'http', not {transport!r}")
    command = read.strings("command")
    url = read.string("url")
    if transport == "stdio" and not command:
        raise RegistryError(f"{where}.command: a stdio engine needs a non-empty command array")
    if transport == "http" and not (url and url.startswith(("http://", "https://"))):
        raise RegistryError(f"{where}.url: an http engine needs an http(s):// URL")
    cwd_text = read.string("cwd")
    cwd = Path(cwd_text) if cwd_text else folder
    if cwd is not None and folder is not None and not cwd.is_absolute():
        cwd = folder / cwd
    weight = read.number("weight", 1.0)
    if weight < 0:
        raise RegistryError(f"{where}.weight: must be >= 0")
    timeout = read.number("timeout", 0.0) or None
    return EngineSpec(
        id=id or "",
        transport="stdio" if transport == "stdio" else "http",
        command=tuple(command),
        url=url,
        priority=int(read.number("priority", 0, integer=True)),
        weight=weight,
        required=read.boolean("required"),
        cwd=cwd,
        env=read.table("env"),
        pass_env=tuple(read.strings("passEnv")),
        token_env=read.string("tokenEnv"),
        headers=read.table("headers"),
        timeout=timeout,
        write=read.boolean("write"),
        discover=read.boolean("discover"),
    )


class _Reader:
    """Typed reads of one entry, each failure naming ``<source>: engines[i].<key>``."""

    def __init__(self, entry: Mapping[str, Any], where: str) -> None:
        self.entry = entry
        self.where = where

    def _fail(self, key: str, what: str) -> RegistryError:
        return RegistryError(f"{self.where}.{key}: {what}")

    def string(self, key: str, *, required: bool = False) -> str | None:
        value = self.entry.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            raise self._fail(key, "a non-empty string is required")
        return value

    def strings(self, key: str) -> Sequence[str]:
        value = self.entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._fail(key, "an array of strings is required")
        return value

    def number(self, key: str, default: float, *, integer: bool = False) -> float:
        value = self.entry.get(key, default)
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise self._fail(key, "an integer is required" if integer else "a number is required")
        return float(value)

    def boolean(self, key: str) -> bool:
        value = self.entry.get(key, False)
        if not isinstance(value, bool):
            raise self._fail(key, "true or false")
        return value

    def table(self, key: str) -> dict[str, str]:
        value = self.entry.get(key, {})
        if not isinstance(value, Mapping) or not all(
            isinstance(name, str) and isinstance(item, str) for name, item in value.items()
        ):
            raise self._fail(key, "an object of strings is required")
        return dict(value)
