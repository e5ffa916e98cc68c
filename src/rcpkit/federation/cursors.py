"""Cursors over fused federated results: gateway-issued, HMAC-signed, consistent pages.

An engine's cursor pages *its* list; a fused list has no engine to ask. So
the federation issues its own cursor: the offset into the fused list, each
snapshot-capable engine's ``indexVersion`` from the first page (pinned on
every later page, §7.6, so a write between pages cannot reshuffle them),
and a fingerprint of the query, all signed with HMAC-SHA256. Each page
re-asks every engine for ``offset + k`` (times the overfetch), fuses as the
first page did, and slices: deterministic engines on pinned versions give the
same fused prefix, so pages neither repeat nor skip a hit.

A cursor from another key (another gateway, a restart without
``RCPKIT_GATEWAY_CURSOR_KEY``), a tampered one, or one reused with a
different query is ``-32602`` naming ``cursor``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from typing import Any

from rcpkit.protocol.errors import RCPError

__all__ = ["CURSOR_KEY_ENV", "CursorSigner", "FusedPage", "fingerprint"]

# Shared by the replicas of one gateway, so that any of them accepts the others' cursors.
CURSOR_KEY_ENV = "RCPKIT_GATEWAY_CURSOR_KEY"
# Fields that do not change which fused list a query pages through.
_NOT_THE_QUERY = frozenset({"cursor", "k", "_meta", "indexVersion"})


@dataclass(frozen=True, slots=True)
class FusedPage:
    """Where a page starts in the fused list, and the engines' pinned versions."""

    offset: int = 0
    pins: dict[str, str] = field(default_factory=dict)


def fingerprint(wire: dict[str, Any]) -> str:
    """The query a cursor belongs to: its wire params minus paging (canonical JSON)."""
    query = {key: value for key, value in wire.items() if key not in _NOT_THE_QUERY}
    canonical = json.dumps(query, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class CursorSigner:
    """Issues and opens fused-list cursors under one secret key."""

    def __init__(self, key: bytes | None = None) -> None:
        configured = os.environ.get(CURSOR_KEY_ENV)
        self._key = key or (configured.encode() if configured else secrets.token_bytes(32))

    def issue(self, query: str, page: FusedPage) -> str:
        payload = json.dumps(
            {"v": 1, "q": query, "o": page.offset, "p": page.pins},
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def open(self, cursor: str, query: str) -> FusedPage:
        body, _, mac = cursor.partition(".")
        try:
            payload = _unb64(body)
            valid = hmac.compare_digest(_unb64(mac), self._mac(payload))
        except ValueError:
            valid = False
        if not valid:
            raise _invalid("not a cursor this gateway issued (or it was altered)")
        data = json.loads(payload)
        if data.get("q") != query:
            raise _invalid("the cursor belongs to a different query")
        pins = data.get("p") or {}
        return FusedPage(int(data.get("o", 0)), {str(k): str(v) for k, v in pins.items()})

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as error:
        raise ValueError(str(error)) from None


def _invalid(message: str) -> RCPError:
    return RCPError.invalid_params("cursor", message)
