"""Bearer tokens and API keys, checked before anything else (§5.2, §15.5, §15.6).

Credentials travel in headers only — ``Authorization: Bearer <token>`` or
``X-API-Key: <token>`` — never in ``params`` (§15.6), so they stay out of
request logs and ``_meta`` traces. Only SHA-256 digests of the tokens are
kept; a lookup compares digests, so timing says nothing about a token.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ANONYMOUS",
    "ANONYMOUS_READER",
    "TOKENS_ENV",
    "WRITE_METHODS",
    "Credential",
    "Credentials",
    "Principal",
]

TOKENS_ENV = "RCPKIT_HTTP_TOKENS"

# §15.3: writes are authorised independently of read access. `feedback` is one:
# a poisonSuspected report can quarantine a source for every reader.
WRITE_METHODS = frozenset({"index/add", "index/delete", "memory/build", "feedback"})


@dataclass(frozen=True, slots=True)
class Principal:
    """Who the transport established the caller to be; engines see ``tenant``."""

    name: str | None
    tenant: str | None = None
    write: bool = True

    def may_call(self, method: str) -> bool:
        return self.write or method not in WRITE_METHODS


ANONYMOUS = Principal(None)
# Without configured auth, unless the operator allows anonymous writes.
ANONYMOUS_READER = Principal(None, write=False)


@dataclass(frozen=True, slots=True)
class Credential:
    """One accepted token: its digest, a name for logs and limits, its scope."""

    name: str
    digest: bytes
    tenant: str | None = None
    write: bool = True

    @classmethod
    def of(
        cls, name: str, token: str, *, tenant: str | None = None, write: bool = True
    ) -> Credential:
        if not token:
            raise ValueError(f"credential {name!r} has an empty token")
        if tenant is not None and not tenant.strip():
            # §15.6: "" would share the unscoped documents; say so instead of guessing.
            raise ValueError(
                f"credential {name!r} has an empty tenant name "
                "(omit `tenant` for an unscoped token)"
            )
        return cls(name, _digest(token.encode()), tenant, write)

    @property
    def principal(self) -> Principal:
        return Principal(self.name, self.tenant, self.write)


class Credentials:
    """The set of accepted tokens."""

    def __init__(self, credentials: Iterable[Credential]) -> None:
        self.entries = tuple(credentials)
        self._by_digest: dict[bytes, Principal] = {}
        for credential in self.entries:
            if credential.digest in self._by_digest:
                raise ValueError(f"credential {credential.name!r} repeats another's token")
            self._by_digest[credential.digest] = credential.principal
        if not self._by_digest:
            raise ValueError("no credentials configured")

    @property
    def scoped(self) -> bool:
        """Whether any credential is scoped to a tenant."""
        return any(principal.tenant is not None for principal in self._by_digest.values())

    def authenticate(self, authorization: bytes | None, api_key: bytes | None) -> Principal | None:
        """The principal for these header values, or None when they name no credential.

        Exactly one credential header counts: both at once name no credential.
        """
        if authorization is not None and api_key is not None:
            return None
        token = _bearer(authorization) if authorization is not None else api_key
        if not token:
            return None
        return self._by_digest.get(_digest(token))

    # --- loading ---

    @classmethod
    def from_env(cls, value: str) -> Credentials:
        """``TOKEN[@TENANT]`` entries separated by commas or whitespace."""
        entries = [entry for entry in value.replace(",", " ").split() if entry]
        credentials = []
        for number, entry in enumerate(entries, 1):
            token, at, tenant = entry.rpartition("@")
            if not at:
                credentials.append(Credential.of(f"env-{number}", entry))
                continue
            # `TOKEN@` names an empty tenant: refused by Credential.of, never unscoped.
            credentials.append(Credential.of(f"env-{number}", token, tenant=tenant))
        return cls(credentials)

    @classmethod
    def from_file(cls, path: Path, environ: Mapping[str, str] | None = None) -> Credentials:
        """A TOML file of ``[[token]]`` tables: ``name``, ``token`` or ``token_env``,
        optional ``tenant`` and ``write`` (default true)."""
        with path.open("rb") as handle:
            document = tomllib.load(handle)
        tables = document.get("token", [])
        if not isinstance(tables, list):
            raise ValueError(f"{path}: `token` must be an array of tables ([[token]])")
        env = os.environ if environ is None else environ
        return cls(_credential_of(table, number, env) for number, table in enumerate(tables, 1))

    @classmethod
    def load(
        cls, file: Path | None, environ: Mapping[str, str] | None = None
    ) -> Credentials | None:
        """Credentials from ``file`` and ``$RCPKIT_HTTP_TOKENS``; None when neither is set."""
        env = os.environ if environ is None else environ
        found: list[Credential] = []
        if file is not None:
            found.extend(cls.from_file(file, env).entries)
        if env.get(TOKENS_ENV, "").strip():
            found.extend(cls.from_env(env[TOKENS_ENV]).entries)
        return cls(found) if found else None


def _credential_of(table: Any, number: int, env: Mapping[str, str]) -> Credential:
    if not isinstance(table, dict):
        raise ValueError(f"token #{number} is not a table")
    name = str(table.get("name") or f"token-{number}")
    token = table.get("token")
    if token is None and "token_env" in table:
        token = env.get(str(table["token_env"]))
    if not isinstance(token, str) or not token:
        raise ValueError(f"token {name!r} has no `token` (or its `token_env` is unset)")
    tenant = table.get("tenant")
    write = table.get("write", True)
    if (tenant is not None and not isinstance(tenant, str)) or not isinstance(write, bool):
        raise ValueError(f"token {name!r}: `tenant` is a string and `write` a boolean")
    return Credential.of(name, token, tenant=tenant, write=write)


def _bearer(value: bytes) -> bytes | None:
    scheme, _, token = value.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return token.strip() or None


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()
