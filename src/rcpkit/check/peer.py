"""Raw JSON-RPC peers for probing a server: no client library in between, so the checker
can send exactly the malformed, batched or out-of-order frames a MUST is about.

Every frame the server sends is validated as JSON-RPC 2.0 (§4, §5.1); what
is wrong is recorded in ``violations`` and reported by its own check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from rcpkit.check.failures import Failed

__all__ = [
    "Exchange",
    "Peer",
    "envelope_problems",
    "is_notification",
    "reject_constant",
    "same_id",
]


@dataclass(slots=True)
class Exchange:
    """What came back for one send: replies (responses or arrays) and notifications."""

    replies: list[Any] = field(default_factory=list)
    notifications: list[dict[str, Any]] = field(default_factory=list)
    status: int | None = None  # HTTP only
    streamed: bool = False  # HTTP only: the answer was an SSE stream

    def only(self) -> Any:
        if len(self.replies) != 1:
            raise Failed(f"expected one answer, got {len(self.replies)}")
        return self.replies[0]


class Peer(Protocol):
    transport: str
    target: str
    violations: list[str]
    session: str | None

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines a spawned server wrote to stderr (none over HTTP)."""
        ...

    async def start(self) -> None: ...

    async def send(
        self,
        message: Any,
        *,
        method: str | None = None,
        replies: int = 1,
        stream: bool = False,
        timeout: float = 10.0,
    ) -> Exchange: ...

    async def close(self) -> None: ...


def same_id(a: object, b: object) -> bool:
    """§4.7: the id is echoed unchanged — same JSON type and value."""
    return type(a) is type(b) and a == b


def envelope_problems(value: Any) -> list[str]:
    """Why ``value`` is not a well-formed JSON-RPC 2.0 frame from a server (empty: it is)."""
    if isinstance(value, list):
        if not value:
            return ["the server sent an empty array"]
        return [problem for member in value for problem in envelope_problems(member)]
    if not isinstance(value, dict):
        return [f"a frame is not an object: {value!r:.60}"]
    if value.get("jsonrpc") != "2.0":
        return [f'`jsonrpc` is not "2.0" in {short(value)}']
    if "method" in value:
        return [] if "id" not in value else [f"the server sent a request: {short(value)}"]
    problems = []
    if "id" not in value:
        problems.append(f"a response without `id`: {short(value)}")
    if ("result" in value) == ("error" in value):
        problems.append(f"a response needs exactly one of result/error: {short(value)}")
    error = value.get("error")
    if "error" in value:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
            problems.append(f"an error needs an integer code and a message: {short(value)}")
    return problems


def short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (§4.6)")


def is_notification(value: Any) -> bool:
    return isinstance(value, dict) and "method" in value and "id" not in value
