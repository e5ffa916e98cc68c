"""The stdio peer: a spawned server spoken to line by line over its stdin/stdout (§5.1)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from rcpkit.check.failures import Failed, Gone
from rcpkit.check.peer import Exchange, envelope_problems, is_notification, reject_constant, same_id
from rcpkit.transport.framing import LineSplitter, Oversized

__all__ = ["StdioPeer"]

_ANY: Any = object()
_EOF: Any = object()
_LINE_LIMIT = 64 * 1024 * 1024
_STDERR_TAIL_LINES = 20


class StdioPeer:
    """A spawned server spoken to line by line over its stdin/stdout (§5.1)."""

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        quiet: float = 0.15,
    ) -> None:
        self.command = list(command)
        self.target = shlex.join(self.command)
        self.violations: list[str] = []
        self.session: str | None = None
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._quiet = quiet
        self._process: asyncio.subprocess.Process | None = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
        self._sentinels = itertools.count(1)
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_reader: asyncio.Task[None] | None = None

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr (its own account of a failure)."""
        return list(self._stderr)

    async def start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
            )
        except OSError as error:
            raise Gone(f"cannot start `{self.target}`: {error}") from None
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read())
        assert self._process.stderr is not None
        self._stderr_reader = loop.create_task(self._read_stderr(self._process.stderr))

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        # Always drained, so a chatty server never blocks on a full pipe.
        while line := await stream.readline():
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    async def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        splitter = LineSplitter(_LINE_LIMIT)
        stdout = self._process.stdout
        while True:
            chunk = await stdout.read(1 << 16)
            for line in splitter.feed(chunk) if chunk else splitter.finish():
                self._accept(line)
            if not chunk:
                self._queue.put_nowait(_EOF)
                return

    def _accept(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            self.violations.append(f"a line of {line.size} bytes")
            return
        try:
            value = json.loads(line, parse_constant=reject_constant)
        except ValueError:
            # §5.1: stdout carries framed JSON-RPC and nothing else.
            self.violations.append(f"stdout carried a line that is not JSON: {line[:80]!r}")
            return
        self.violations.extend(envelope_problems(value))
        self._queue.put_nowait(value)

    async def _next(self, until: float) -> Any:
        loop = asyncio.get_running_loop()
        try:
            value = await asyncio.wait_for(self._queue.get(), max(0.0, until - loop.time()))
        except TimeoutError:
            raise Failed("no answer within the time limit") from None
        if value is _EOF:
            self._queue.put_nowait(_EOF)
            raise Gone(await self._ended())
        return value

    async def _ended(self) -> str:
        process = self._process
        assert process is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 1.0)
        if self._stderr_reader is not None:
            # What the server said as it went (its last stderr lines) is read to the end.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_reader), 0.5)
        code = process.returncode
        if code is None:
            return "the server closed its output (still running)"
        return f"the server closed its output and exited with code {code}"

    def _write(self, message: Any) -> None:
        assert self._process is not None and self._process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        if not data.endswith(b"\n"):
            data += b"\n"
        try:
            self._process.stdin.write(data)
        except (ConnectionError, RuntimeError):
            raise Gone("the server's stdin is closed") from None

    async def send(
        self,
        message: Any,
        *,
        method: str | None = None,
        replies: int = 1,
        stream: bool = False,
        timeout: float = 10.0,
    ) -> Exchange:
        """Write ``message`` and collect ``replies`` answers (0: expect silence)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        self._write(message)
        exchange = Exchange()
        if replies == 0:
            await self._silence(exchange, until)
            return exchange
        wanted = message.get("id", _ANY) if isinstance(message, dict) else _ANY
        while len(exchange.replies) < replies:
            value = await self._next(until)
            if is_notification(value):
                exchange.notifications.append(value)
            elif wanted is _ANY or (isinstance(value, dict) and same_id(value.get("id"), wanted)):
                exchange.replies.append(value)
            # anything else is a late answer to an earlier probe: not this exchange's
        return exchange

    async def _silence(self, exchange: Exchange, until: float) -> None:
        # A ping after the probe: whatever arrives before its answer was an answer to the probe.
        sentinel = f"rcpcheck-sentinel-{next(self._sentinels)}"
        self._write({"jsonrpc": "2.0", "id": sentinel, "method": "ping"})
        while True:
            value = await self._next(until)
            if isinstance(value, dict) and value.get("id") == sentinel:
                break
            (exchange.notifications if is_notification(value) else exchange.replies).append(value)
        grace = asyncio.get_running_loop().time() + self._quiet
        with contextlib.suppress(Failed):
            while True:
                value = await self._next(grace)
                (exchange.notifications if is_notification(value) else exchange.replies).append(
                    value
                )

    async def close(self) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        try:
            # §13.1: after shutdown and EOF a server SHOULD exit; it gets a moment, then is killed.
            await asyncio.wait_for(process.wait(), 1.5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await asyncio.wait_for(process.wait(), 5.0)
        for task in (self._reader, self._stderr_reader):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
