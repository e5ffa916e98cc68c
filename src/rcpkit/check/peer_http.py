"""The HTTP peer: one POST per probe, SSE when streaming (§5.2)."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from rcpkit.check.failures import Failed, Gone
from rcpkit.check.peer import Exchange, envelope_problems, is_notification, reject_constant
from rcpkit.client.http import import_httpx

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpPeer"]


class HttpPeer:
    """An HTTP server spoken to one POST at a time (§5.2)."""

    transport = "http"

    def __init__(self, url: str, *, token: str | None = None) -> None:
        self.target = url.rstrip("/")
        self.violations: list[str] = []
        self.session: str | None = None
        self._token = token
        self._client: httpx.AsyncClient | None = None

    @property
    def stderr_tail(self) -> list[str]:
        """An HTTP server's stderr is not ours to read."""
        return []

    async def start(self) -> None:
        headers = {"authorization": f"Bearer {self._token}"} if self._token else {}
        httpx = import_httpx()
        self._client = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(10.0, read=None))

    async def send(
        self,
        message: Any,
        *,
        method: str | None = None,
        replies: int = 1,
        stream: bool = False,
        timeout: float = 10.0,
    ) -> Exchange:
        assert self._client is not None
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        if method is None and isinstance(message, dict) and isinstance(message.get("method"), str):
            method = message["method"]
        url = f"{self.target}/{method}" if method else self.target
        headers = {"content-type": "application/json"}
        headers["accept"] = "text/event-stream" if stream else "application/json"
        if self.session:
            headers["rcp-session"] = self.session
        exchange = Exchange()
        httpx = import_httpx()
        try:
            async with asyncio.timeout(timeout):
                async with self._client.stream("POST", url, content=body, headers=headers) as reply:
                    exchange.status = reply.status_code
                    if reply.headers.get("content-type", "").startswith("text/event-stream"):
                        exchange.streamed = True
                        await self._events(reply, exchange)
                    else:
                        self._body(await reply.aread(), exchange)
                    if method == "initialize" and reply.headers.get("rcp-session"):
                        self.session = reply.headers["rcp-session"]
        except TimeoutError:
            raise Failed("no answer within the time limit") from None
        except httpx.ConnectError as error:
            raise Gone(f"cannot connect to {self.target}: {error}") from None
        except httpx.HTTPError as error:
            raise Failed(f"HTTP transport error: {type(error).__name__}: {error}") from None
        if method == "initialize" and not self.session:
            self.session = _session_of(exchange.replies)
        return exchange

    def _body(self, body: bytes, exchange: Exchange) -> None:
        if not body.strip():
            return
        try:
            value = json.loads(body, parse_constant=reject_constant)
        except ValueError:
            if exchange.status == 200:
                self.violations.append(f"a 200 body that is not JSON: {body[:80]!r}")
            return
        if exchange.status == 200:
            self.violations.extend(envelope_problems(value))
        exchange.replies.append(value)

    async def _events(self, reply: httpx.Response, exchange: Exchange) -> None:
        data: list[str] = []
        async for line in reply.aiter_lines():
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif not line and data:
                self._event("\n".join(data), exchange)
                data = []
        if data:
            self._event("\n".join(data), exchange)

    def _event(self, text: str, exchange: Exchange) -> None:
        try:
            value = json.loads(text, parse_constant=reject_constant)
        except ValueError:
            self.violations.append(f"an SSE frame that is not JSON: {text[:80]!r}")
            return
        self.violations.extend(envelope_problems(value))
        (exchange.notifications if is_notification(value) else exchange.replies).append(value)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _session_of(replies: list[Any]) -> str | None:
    for reply in replies:
        result = reply.get("result") if isinstance(reply, dict) else None
        meta = result.get("_meta") if isinstance(result, dict) else None
        session = meta.get("session") if isinstance(meta, dict) else None
        if isinstance(session, str) and session:
            return session
    return None
