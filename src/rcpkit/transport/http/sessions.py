"""HTTP sessions (§5.2): a token from ``initialize`` names one isolated Session.

Each stateful session owns its own :class:`Session` (handshake state, client
capabilities) and :class:`Dispatcher` (its in-flight ids, so a
``notifications/cancel`` reaches only its own requests). A session belongs to
the caller that opened it: another caller presenting the token is told the
session is unknown, exactly as for an expired one, so tokens confirm nothing.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

from rcpkit.codec import Request
from rcpkit.server.dispatcher import Dispatcher
from rcpkit.server.registration import Served
from rcpkit.server.session import Call, Immediate, Session
from rcpkit.transport.http.limits import Clock
from rcpkit.transport.http.workers import mint_prefix

__all__ = ["HttpSession", "SessionEntry", "SessionStore"]


class HttpSession(Session):
    """A stateful session whose successful ``initialize`` carries its token."""

    def __init__(self, server: Served) -> None:
        super().__init__(server)
        self.token = ""  # minted by a successful initialize

    def prepare(self, request: Request) -> Immediate | Call:
        prepared = super().prepare(request)
        if request.method == "initialize" and isinstance(prepared, Immediate):
            # §5.2: the token rides in initialize.result._meta.session.
            # Under --workers, the token names its worker (the router keeps it there).
            self.token = self.token or mint_prefix() + secrets.token_urlsafe(32)
            result = dict(prepared.result)
            result["_meta"] = {**result.get("_meta", {}), "session": self.token}
            prepared = Immediate(result)
        return prepared


@dataclass(slots=True)
class SessionEntry:
    session: HttpSession
    dispatcher: Dispatcher
    owner: str  # the credential that opened it ("" without auth): only it may use it
    caller: str  # whom the per-caller session cap counts it against
    used: float = 0.0
    active: int = 0  # HTTP exchanges running on it now

    @property
    def token(self) -> str:
        return self.session.token

    @property
    def busy(self) -> bool:
        return self.active > 0 or self.dispatcher.in_flight > 0


class SessionStore:
    """Live sessions by token; an idle session expires after ``ttl`` seconds."""

    def __init__(
        self,
        *,
        ttl: float,
        max_sessions: int,
        max_per_caller: int,
        clock: Clock = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max_sessions = max_sessions
        self._max_per_caller = max_per_caller
        self._clock = clock
        # Least recently used first, so an expiry scan stops at the first live one.
        self._entries: OrderedDict[str, SessionEntry] = OrderedDict()
        self._per_caller: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def has_room(self, caller: str) -> bool:
        self.expire()
        return (
            len(self._entries) < self._max_sessions
            and self._per_caller.get(caller, 0) < self._max_per_caller
        )

    def add(self, entry: SessionEntry) -> None:
        entry.used = self._clock()
        self._entries[entry.token] = entry
        self._per_caller[entry.caller] = self._per_caller.get(entry.caller, 0) + 1

    def get(self, token: str, owner: str) -> SessionEntry | None:
        """The live session ``token`` of ``owner``, or None (unknown, expired or not theirs)."""
        entry = self._entries.get(token)
        if entry is None or entry.owner != owner:
            return None
        if not entry.busy and self._idle_too_long(entry):
            self.remove(token)
            return None
        self.touch(entry)
        return entry

    def touch(self, entry: SessionEntry) -> None:
        entry.used = self._clock()
        if entry.token in self._entries:
            self._entries.move_to_end(entry.token)

    def remove(self, token: str) -> None:
        entry = self._entries.pop(token, None)
        if entry is None:
            return
        left = self._per_caller.get(entry.caller, 0) - 1
        if left > 0:
            self._per_caller[entry.caller] = left
        else:
            self._per_caller.pop(entry.caller, None)

    def expire(self) -> None:
        """Drop idle sessions past their TTL; a busy one is kept and counts as used."""
        for _ in range(len(self._entries)):
            token, entry = next(iter(self._entries.items()))
            if entry.busy:
                self.touch(entry)
            elif self._idle_too_long(entry):
                self.remove(token)
            else:
                return

    def entries(self) -> list[SessionEntry]:
        return list(self._entries.values())

    def _idle_too_long(self, entry: SessionEntry) -> bool:
        return self._clock() - entry.used >= self._ttl
