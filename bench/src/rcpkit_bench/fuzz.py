"""``rcpkit bench fuzz``: the R1 campaign — hostile frames against real servers, audited.

Frames come from :mod:`rcpkit_bench.fuzz_frames` (seeded, so a failure replays).
Over stdio they are pipelined to ``rcpkit serve --stdio`` (the persistent engine
over a small hashing-embedder index, and the keyword engine) in rounds; each
round ends with a ping and waits, bounded, for every id it owes. Over HTTP they
are POSTed on keep-alive connections. The audit, per target:

- every request id answered exactly once (none missing, none twice);
- no ``-32603`` (each one is a bug) and no traceback in any ``error.data``;
- every stdout line a JSON-RPC frame; the server never dies and never hangs.
"""

from __future__ import annotations

import http.client
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from rcpkit_bench.fuzz_frames import FrameGenerator, Sent
from rcpkit_bench.report import Figure, Scale

__all__ = ["Audit", "fuzz_http", "fuzz_stdio", "run"]

PYTHON = sys.executable
_FRAMES = {"full": 1_000_000, "quick": 100_000, "smoke": 3_000}
_HTTP_FRAMES = {"full": 20_000, "quick": 5_000, "smoke": 300}
_ROUND = 2_000  # Sent items between two synchronisation pings
_ROUND_TIMEOUT = 120.0  # > the server's default deadline (60 s): a miss is a hang
_TRACE = re.compile(r"Traceback|File \"|line \d+, in ")
_INTERNAL_ERROR = -32603
_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@dataclass
class Audit:
    """What one campaign saw; ``clean`` is the R1 bar."""

    target: str
    frames: int = 0
    requests: int = 0
    answered: int = 0
    missing: int = 0
    duplicates: int = 0
    internal: int = 0
    tracebacks: int = 0
    malformed: int = 0
    strays: int = 0
    refused: int = 0  # requests refused whole at the transport (HTTP 401/403), no id to echo
    crashed: bool = False
    hung: bool = False
    seconds: float = 0.0
    codes: Counter[int] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.missing
            or self.duplicates
            or self.internal
            or self.tracebacks
            or self.malformed
            or self.crashed
            or self.hung
        )

    def note(self, problem: str) -> None:
        if len(self.examples) < 20:
            self.examples.append(problem[:400])

    def summary(self) -> str:
        return (
            f"{self.target}: {self.frames} frames in {self.seconds:.0f} s, "
            f"{self.answered}/{self.requests} ids answered once (+{self.refused} refused "
            f"by the transport), missing {self.missing}, "
            f"twice {self.duplicates}, -32603 {self.internal}, tracebacks {self.tracebacks}, "
            f"malformed {self.malformed}, crashed {self.crashed}, hung {self.hung}"
        )


def _key(id: Any) -> bytes:
    # The id's JSON text keeps its type: 5, 5.5 and "5" are three ids (§4.7).
    return msgspec.json.encode(id)


class _Ledger:
    """The ids the server owes, and what it actually answered (thread-safe)."""

    def __init__(self, audit: Audit) -> None:
        self.audit = audit
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.owed: set[bytes] = set()
        self.maybe: set[bytes] = set()
        self.seen: set[bytes] = set()
        # The frame behind each id of the current round, to name what hung.
        self.lines: dict[bytes, bytes] = {}

    def expect(self, sent: Sent) -> None:
        with self.lock:
            for id in sent.exact:
                self.owed.add(_key(id))
                self.lines[_key(id)] = b"\n".join(line[:400] for line in sent.lines)
            self.audit.requests += len(sent.exact)
            for id in sent.maybe:
                self.maybe.add(_key(id))

    def answer(self, message: Any) -> None:
        """Audit one decoded frame the server wrote."""
        members = message if isinstance(message, list) else [message]
        with self.lock:
            for member in members:
                self._member(member)
            self.changed.notify_all()

    def _member(self, member: Any) -> None:
        audit = self.audit
        if not isinstance(member, dict) or member.get("jsonrpc") != "2.0":
            audit.malformed += 1
            audit.note(f"malformed frame {str(member)[:200]}")
            return
        if "method" in member and "id" not in member:
            return  # a notification (progress, log)
        if "id" not in member or ("result" in member) == ("error" in member):
            audit.malformed += 1
            audit.note(f"not a response {str(member)[:200]}")
            return
        error = member.get("error")
        if error is not None:
            self._error(error, member)
        id = member["id"]
        if id is None:
            return
        key = _key(id)
        if key in self.seen:
            audit.duplicates += 1
            audit.note(f"id {id!r} answered twice")
            return
        self.seen.add(key)
        if key in self.owed:
            self.owed.discard(key)
            audit.answered += 1
        elif key in self.maybe:
            self.maybe.discard(key)
        else:
            audit.strays += 1

    def _error(self, error: Any, member: dict[str, Any]) -> None:
        audit = self.audit
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(code, int) or not isinstance(error.get("message"), str):
            audit.malformed += 1
            audit.note(f"malformed error {str(member)[:200]}")
            return
        audit.codes[code] += 1
        if code == _INTERNAL_ERROR:
            audit.internal += 1
            audit.note(f"-32603 for id {member.get('id')!r}: {error.get('message')}")
        if "data" in error and _TRACE.search(msgspec.json.encode(error["data"]).decode()):
            audit.tracebacks += 1
            audit.note(f"traceback in error.data: {str(error['data'])[:200]}")

    def refuse(self, body: bytes) -> None:
        """The requests of ``body`` were refused whole by the transport (HTTP 401/403)."""
        try:
            value = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return
        members = value if isinstance(value, list) else [value]
        with self.lock:
            for member in members:
                if isinstance(member, dict) and "id" in member:
                    key = _key(member["id"])
                    if key in self.owed:
                        self.owed.discard(key)
                        self.seen.add(key)
                        self.audit.refused += 1

    def wait_paid(self, keys: set[bytes], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.lock:
            while keys & self.owed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 1.0))
        return True


# --- stdio ---


def fuzz_stdio(command: list[str], frames: int, *, seed: int = 1, target: str = "") -> Audit:
    """Pipeline ``frames`` generated frames to a spawned stdio server and audit its answers."""
    audit = Audit(target or " ".join(command))
    ledger = _Ledger(audit)
    generator = FrameGenerator(seed)
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr
        )
        reader = threading.Thread(target=_read_stdout, args=(process, ledger), daemon=True)
        reader.start()
        started = time.monotonic()
        try:
            _drive(process, ledger, generator, frames)
        finally:
            audit.seconds = time.monotonic() - started
            _finish(process, ledger)
            reader.join(10)
            if process.stdout is not None:
                process.stdout.close()
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace")
            if "Traceback" in tail:
                audit.note(f"stderr: {tail[-600:]}")
    return audit


def _read_stdout(process: subprocess.Popen[bytes], ledger: _Ledger) -> None:
    assert process.stdout is not None
    decoder = msgspec.json.Decoder()
    for line in process.stdout:
        if not line.strip():
            continue
        try:
            message = decoder.decode(line)
        except msgspec.DecodeError:
            with ledger.lock:
                ledger.audit.malformed += 1
                ledger.audit.note(f"stdout line is not JSON: {line[:200]!r}")
            continue
        ledger.answer(message)


def _drive(
    process: subprocess.Popen[bytes], ledger: _Ledger, generator: FrameGenerator, frames: int
) -> None:
    audit = ledger.audit
    stdin = process.stdin
    assert stdin is not None
    hello = {"protocolVersion": 1, "capabilities": {"log": {}}, "_meta": {"logLevel": "notice"}}
    _write(stdin, [_frame("hello", "initialize", hello)], ledger, ["hello"])
    round_number = 0
    while audit.frames < frames:
        round_number += 1
        keys: set[bytes] = set()
        chunk: list[bytes] = []
        for _ in range(_ROUND):
            sent = generator.next()
            ledger.expect(sent)
            keys.update(_key(id) for id in sent.exact)
            chunk.extend(sent.lines)
            audit.frames += len(sent.lines)
            audit.kinds[sent.kind] += 1
            if audit.frames >= frames:
                break
        sync = f"sync-{round_number}"
        chunk.append(_frame(sync, "ping", {}))
        if not _write(stdin, chunk, ledger, [sync]):
            audit.crashed = True
            audit.note(f"the server closed its input in round {round_number}")
            return
        keys.add(_key(sync))
        if not ledger.wait_paid(keys, _ROUND_TIMEOUT):
            audit.crashed = process.poll() is not None
            audit.hung = not audit.crashed
            unpaid = keys & ledger.owed
            audit.note(f"round {round_number}: {len(unpaid)} ids never answered")
            for key in list(unpaid)[:5]:
                audit.note(f"unanswered {key!r}: {ledger.lines.get(key, b'')!r}")
            return
        with ledger.lock:
            ledger.lines.clear()


def _frame(id: Any, method: str, params: Any) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def _write(stdin: Any, lines: list[bytes], ledger: _Ledger, owed: list[Any]) -> bool:
    ledger.expect(Sent([], exact=owed))
    try:
        stdin.write(b"\n".join(lines) + b"\n")
        stdin.flush()
    except (BrokenPipeError, OSError):
        return False
    return True


def _finish(process: subprocess.Popen[bytes], ledger: _Ledger) -> None:
    audit = ledger.audit
    if process.poll() is not None and not audit.hung:
        audit.crashed = True
        audit.note(f"the server exited with {process.returncode} mid-campaign")
    if process.poll() is None:
        stdin = process.stdin
        assert stdin is not None
        if _write(stdin, [_frame("bye", "shutdown", {})], ledger, ["bye"]):
            ledger.wait_paid({_key("bye")}, 30)
        with suppress(OSError):
            stdin.close()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            audit.hung = True
            audit.note("the server did not exit after shutdown")
            process.kill()
            process.wait(10)
    with ledger.lock:
        audit.missing += len(ledger.owed)


# --- HTTP ---


def fuzz_http(url: str, frames: int, *, seed: int = 2, connections: int = 4) -> Audit:
    """POST ``frames`` generated frames to ``url`` on keep-alive connections and audit them."""
    audit = Audit(f"HTTP {url}")
    ledger = _Ledger(audit)
    generator = FrameGenerator(seed, huge_bytes=1 << 18)
    lock = threading.Lock()
    sents: Iterator[Sent] = generator.frames()
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port
    started = time.monotonic()

    def take() -> Sent | None:
        with lock:
            if audit.frames >= frames:
                return None
            sent = next(sents)
            audit.frames += len(sent.lines)
            audit.kinds[sent.kind] += 1
            ledger.expect(sent)
            return sent

    def worker() -> None:
        connection = http.client.HTTPConnection(host, port, timeout=_ROUND_TIMEOUT)
        try:
            while (sent := take()) is not None:
                for line in sent.lines:
                    if not _post(connection, parts.path or "/rcp", line, ledger):
                        connection.close()
                        connection = http.client.HTTPConnection(host, port, timeout=_ROUND_TIMEOUT)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    audit.seconds = time.monotonic() - started
    audit.missing = len(ledger.owed)
    return audit


def _post(connection: http.client.HTTPConnection, path: str, body: bytes, ledger: _Ledger) -> bool:
    audit = ledger.audit
    try:
        connection.request("POST", path, body=body, headers=_HEADERS)
        response = connection.getresponse()
        data = response.read()
    except TimeoutError:
        with ledger.lock:
            audit.hung = True
            audit.note(f"no HTTP answer within {_ROUND_TIMEOUT} s")
        return False
    except (http.client.HTTPException, OSError) as error:
        with ledger.lock:
            audit.note(f"HTTP connection error {error!r}")
        return False
    if response.status >= 500 and response.status != 503:
        with ledger.lock:
            audit.internal += 1
            audit.note(f"HTTP {response.status}: {data[:200]!r}")
    for frame in _frames_of(response.getheader("Content-Type") or "", data, ledger):
        ledger.answer(frame)
    if response.status in (401, 403):
        # §15.6: refused at the transport. A refusal that echoes its ids (§4.7) was
        # counted above; one that could not (no credentials, before any id was read)
        # answers every request of the body that is still owed.
        ledger.refuse(body)
    return not response.will_close


def _frames_of(content_type: str, data: bytes, ledger: _Ledger) -> list[Any]:
    if not data.strip():
        return []
    chunks = [data]
    if content_type.startswith("text/event-stream"):
        chunks = [line[5:].strip() for line in data.splitlines() if line.startswith(b"data:")]
    frames = []
    for chunk in chunks:
        try:
            frames.append(msgspec.json.decode(chunk))
        except msgspec.DecodeError:
            with ledger.lock:
                ledger.audit.malformed += 1
                ledger.audit.note(f"HTTP body is not JSON: {chunk[:200]!r}")
    return frames


# --- the suite ---


@contextmanager
def _sample_index() -> Iterator[Path]:
    """A small persistent index (the bundled samples, hashing embedder: fast to serve)."""
    from importlib import resources

    with tempfile.TemporaryDirectory(prefix="rcpkit-fuzz-") as folder:
        index = Path(folder) / "index"
        samples = resources.files("rcpkit") / "samples"
        subprocess.run(
            [
                PYTHON,
                "-m",
                "rcpkit",
                "index",
                str(samples),
                "--index",
                str(index),
                "--embedder",
                "hashing:64",
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        yield index


@contextmanager
def _http_server(command: list[str]) -> Iterator[str]:
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        yield _announced(process)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


def _announced(process: subprocess.Popen[bytes]) -> str:
    assert process.stderr is not None
    fd, seen, deadline = process.stderr.fileno(), b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        chunk = os.read(fd, 4096) if ready else b""
        if ready and not chunk:
            break
        seen += chunk
        found = re.search(rb"on (http://\S+)", seen)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return found.group(1).decode()
    raise RuntimeError(f"the HTTP server announced no URL: {seen[-400:]!r}")


def _figures(audit: Audit, name: str) -> list[Figure]:
    verdict = "clean" if audit.clean else "FAILED"
    note = (
        f"{verdict}: {audit.answered}/{audit.requests} ids answered exactly once; missing "
        f"{audit.missing}, twice {audit.duplicates}, -32603 {audit.internal}, tracebacks "
        f"{audit.tracebacks}, malformed {audit.malformed}, crashed {int(audit.crashed)}, "
        f"hung {int(audit.hung)}"
    )
    rate = audit.frames / audit.seconds if audit.seconds else 0.0
    return [
        Figure("fuzz", f"{name}: frames sent", float(audit.frames), "frames", note=note),
        Figure("fuzz", f"{name}: throughput", rate, "frames/s"),
        Figure(
            "fuzz", f"{name}: failures", float(_failures(audit)), "failures", higher_is_better=False
        ),
    ]


def _failures(audit: Audit) -> int:
    return (
        audit.missing
        + audit.duplicates
        + audit.internal
        + audit.tracebacks
        + audit.malformed
        + int(audit.crashed)
        + int(audit.hung)
    )


def run(scale: Scale = "full", *, report: Callable[[str], None] | None = None) -> list[Figure]:
    """The campaign at ``scale``: stdio against both engines, then HTTP."""
    say = report or (lambda line: print(line, file=sys.stderr, flush=True))
    frames, http_frames = _FRAMES[scale], _HTTP_FRAMES[scale]
    figures: list[Figure] = []
    audits: list[Audit] = []
    with _sample_index() as index:
        persistent = [
            PYTHON,
            "-m",
            "rcpkit",
            "serve",
            "--stdio",
            "--index",
            str(index),
            "--embedder",
            "hashing:64",
        ]
        keyword = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword", "--sample"]
        for name, command, seed in (
            ("stdio persistent", persistent, 11),
            ("stdio keyword", keyword, 12),
        ):
            audit = fuzz_stdio(command, frames, seed=seed, target=name)
            say(audit.summary())
            audits.append(audit)
            figures += _figures(audit, name)
        http = [
            PYTHON,
            "-m",
            "rcpkit",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--index",
            str(index),
            "--embedder",
            "hashing:64",
        ]
        with _http_server(http) as url:
            audit = fuzz_http(url, http_frames)
        say(audit.summary())
        audits.append(audit)
        figures += _figures(audit, "HTTP persistent")
    for audit in audits:
        for example in audit.examples:
            say(f"  {audit.target}: {example}")
    return figures
