"""Pinned index versions (§7.7.1) and pagination cursors (§10).

A caller sees its tenant's own versions (§15.6, ``store/tenant_versions``):
its n-th commit is its version n, whatever other tenants write, and a version
is servable from its tenant's floor up to its latest commit; anything else is
refused, never silently replaced, and the refusal names no range (the range
would tell one tenant how many versions another made). A cursor
binds the query and its options (``Query.digest``), the served version and an offset,
and is signed with a per-index secret, so page 2 is the next slice of the
same ranking of the same snapshot, and a forged cursor is detected.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

from rcpkit.engine.store.base import Store
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = [
    "Cursor",
    "Served",
    "cursor_secret",
    "decode_cursor",
    "encode_cursor",
    "resolve_version",
]


@dataclass(frozen=True, slots=True)
class Cursor:
    version: int
    offset: int
    digest: str


@dataclass(frozen=True, slots=True)
class Served:
    """The version a read serves: the tenant's number for it and the store's global one."""

    shown: int  # what the caller sees (indexVersion, cursors)
    version: int  # what the store reads at


def resolve_version(store: Store, pinned: str | int | None, tenant: str | None = None) -> Served:
    """The version to serve ``tenant``: the pinned one if still available, else the latest."""
    tenancy = store.tenancy
    if pinned is None:
        return Served(tenancy.latest(tenant), store.version)
    try:
        shown = int(pinned)
    except ValueError:
        raise RCPError.invalid_params(
            "indexVersion", "not an index version of this server"
        ) from None
    version = tenancy.global_version(tenant, shown)
    if version is None:
        # §7.7.1: serve exactly that snapshot or fail; never another one. §15.6: the
        # message names no range of versions (another tenant's writes move none of them,
        # but the caller learns nothing of the store from it either).
        raise RCPError(
            ErrorCode.BACKEND_UNAVAILABLE,
            f"index version {shown} is not available; retrieve without indexVersion for the latest",
            retryable=False,
        )
    return Served(shown, version)


def cursor_secret(store: Store) -> bytes:
    # §10: one secret per index, in the store, so every server sharing the store
    # accepts the cursors any of them issued; set-if-absent, so they agree on it.
    return bytes.fromhex(store.setting_default("cursor.secret", secrets.token_hex(32)))


def encode_cursor(cursor: Cursor, secret: bytes) -> str:
    body = json.dumps([cursor.version, cursor.offset, cursor.digest], separators=(",", ":"))
    signature = hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()[:32]
    return base64.urlsafe_b64encode(f"{body}|{signature}".encode()).decode().rstrip("=")


def decode_cursor(
    token: str, secret: bytes, digest: str, store: Store, tenant: str | None = None
) -> Cursor:
    """The cursor ``token`` names, or -32602 (-32015 once its version was collected).

    The signature is checked on bytes before the body is parsed, so nothing a
    client makes up (non-ASCII signatures, deep JSON) reaches more than base64
    and an HMAC. A cursor of another query or tenant and a made-up one get the
    same answer, so a caller cannot probe which cursors exist (§15.6).
    """
    try:
        padded = token + "=" * (-len(token) % 4)
        body, signature = base64.urlsafe_b64decode(padded.encode("ascii")).rsplit(b"|", 1)
    except (ValueError, UnicodeEncodeError):
        raise _not_this_cursor() from None
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()[:32].encode()
    if not hmac.compare_digest(signature, expected):
        raise _not_this_cursor()
    try:
        version, offset, bound = json.loads(body)
    except (ValueError, TypeError):
        raise _not_this_cursor() from None
    if bound != digest or not isinstance(offset, int) or not isinstance(version, int):
        raise _not_this_cursor()
    # The cursor holds the tenant's own version number (§15.6): only its writes age it.
    if store.tenancy.global_version(tenant, version) is None:
        raise RCPError(ErrorCode.NOT_FOUND, "the cursor expired; restart pagination")
    return Cursor(version, offset, bound)


def _not_this_cursor() -> RCPError:
    return RCPError.invalid_params(
        "cursor",
        "not a cursor of this query on this index: a cursor continues the call that "
        "returned it, so repeat its query, k, tokenBudget, filter and mode unchanged",
    )
