"""Spawning a stdio server (§5.1) with a least-privilege environment and directory (§15.1)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rcpkit.client.channel import Outgoing, Receiver
from rcpkit.client.streams import StreamChannel
from rcpkit.protocol.base import Id
from rcpkit.transport.stdio import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "BASE_ENVIRONMENT",
    "SETTINGS_ENVIRONMENT",
    "StdioChannel",
    "StdioEndpoint",
    "child_environment",
]

# §15.1: what a spawned server inherits unless the endpoint names more. Enough to
# find executables and speak UTF-8; no credentials, tokens or cloud settings.
BASE_ENVIRONMENT: tuple[str, ...] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
)

# rcpkit's own settings (docs/configuration.md), passed through too, so that
# `Client.connect_stdio(["rcpkit", "serve"])` opens the index the caller's
# `rcpkit serve` would. Credentials (RCPKIT_TOKEN, RCPKIT_HTTP_TOKENS,
# RCPKIT_GATEWAY_CURSOR_KEY) and one process's internals (RCPKIT_HTTP_SOCKET_FD,
# RCPKIT_FEDERATION_PATH, ...) are not settings and stay withheld (§15.1).
SETTINGS_ENVIRONMENT: tuple[str, ...] = (
    "RCPKIT_INDEX",
    "RCPKIT_EMBEDDER",
    "RCPKIT_SPARSE",
    "RCPKIT_STORE",
    "RCPKIT_READ_ONLY",
    "RCPKIT_LOG_LEVEL",
    "RCPKIT_HTTP_WORKERS",
    "XDG_DATA_HOME",  # where the default index lives when RCPKIT_INDEX is unset
)

StderrMode = Literal["capture", "inherit", "discard"]
_STDERR_TAIL_LINES = 20
_CLOSE_SECONDS = 2.0  # how long close() waits for an exit after EOF before terminating


@dataclass(frozen=True, slots=True)
class StdioEndpoint:
    """A server command to spawn.

    The server inherits ``BASE_ENVIRONMENT`` (``PATH``, ``HOME``, the locale
    and temp variables) and ``SETTINGS_ENVIRONMENT`` (``RCPKIT_INDEX`` and
    rcpkit's other settings, ``XDG_DATA_HOME``) from this process; ``pass_env``
    names more variables to copy; ``env`` sets variables last, overriding any
    of those (``env={"RCPKIT_INDEX": "/other"}``); everything else is withheld
    (§15.1: no tokens or cloud credentials). ``cwd`` is the working
    directory (default: this process's). ``stderr``: ``capture`` keeps the
    last lines for error messages, ``inherit`` shares ours, ``discard`` drops it.
    """

    command: Sequence[str]
    cwd: str | Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: Sequence[str] = ()
    stderr: StderrMode = "capture"
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    def __post_init__(self) -> None:
        if isinstance(self.command, str) or not self.command:
            raise ValueError("a stdio command is a non-empty list of arguments")


def child_environment(
    endpoint: StdioEndpoint, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment a spawned server gets: the base set, rcpkit's settings,
    ``pass_env``, then ``env``."""
    source = os.environ if environ is None else environ
    names = (*BASE_ENVIRONMENT, *SETTINGS_ENVIRONMENT, *endpoint.pass_env)
    env = {name: source[name] for name in names if name in source}
    env.update(endpoint.env)
    return env


class StdioChannel:
    """A spawned server process spoken to over its stdin/stdout."""

    def __init__(self, endpoint: StdioEndpoint) -> None:
        self.endpoint = endpoint
        self._process: asyncio.subprocess.Process | None = None
        self._stream: StreamChannel | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._description = f"stdio server `{shlex.join(endpoint.command)}`"

    @property
    def description(self) -> str:
        return self._description

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def stderr_tail(self) -> list[str]:
        return list(self._stderr_tail)

    async def open(self, receiver: Receiver) -> None:
        endpoint = self.endpoint
        stderr = {
            "capture": asyncio.subprocess.PIPE,
            "inherit": None,
            "discard": asyncio.subprocess.DEVNULL,
        }[endpoint.stderr]
        process = await asyncio.create_subprocess_exec(
            *endpoint.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            cwd=endpoint.cwd,
            env=child_environment(endpoint),
        )
        self._process = process
        assert process.stdin is not None and process.stdout is not None
        if process.stderr is not None:
            self._stderr_task = asyncio.get_running_loop().create_task(
                self._read_stderr(process.stderr)
            )
        stdin = process.stdin
        self._stream = StreamChannel(
            process.stdout.read,
            stdin.write,
            description=self._description,
            drain=stdin.drain,
            close_input=stdin.close,
            ended=self._ended,
            max_line_bytes=endpoint.max_line_bytes,
        )
        await self._stream.open(receiver)

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._stderr_tail.append(line.decode("utf-8", "replace").rstrip())

    async def _ended(self) -> str:
        process = self._process
        assert process is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 1.0)
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
        code = process.returncode
        status = "is still running" if code is None else f"exited with code {code}"
        tail = "; stderr: " + " | ".join(self._stderr_tail) if self._stderr_tail else ""
        return f"the server closed its output and {status}{tail}"

    def send(self, message: Outgoing) -> None:
        if self._stream is not None:
            self._stream.send(message)

    def abandon(self, id: Id) -> None:
        """A late answer on a pipe is read and discarded by the connection."""

    def renew(self) -> bool:
        return False

    async def close(self) -> None:
        """EOF first (§5.1, an orderly shutdown), then terminate, then kill; each bounded."""
        process, stream = self._process, self._stream
        if process is None or stream is None:
            return
        await stream.close()
        try:
            await asyncio.wait_for(process.wait(), _CLOSE_SECONDS)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 1.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await asyncio.wait_for(process.wait(), 5.0)
        await stream.stop_reading(1.0)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._stderr_task
