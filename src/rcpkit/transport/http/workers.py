"""N worker processes on one listening address, kept alive by a parent (pre-fork).

``rcpkit serve --http --workers N`` binds the address once, in a parent that
never opens the index, then starts N copies of the same command, each
inheriting a listening socket (its descriptor travels in
``RCPKIT_HTTP_SOCKET_FD``): one per worker on the same address where
``SO_REUSEPORT`` exists, so the kernel spreads new connections over them
(``serve.bind_sockets``), else one they share. N workers can use N cores; on
two cores one worker alone keeps 1.6 busy (BENCHMARKS.md). Each worker opens
the index itself and follows commits as a single server does: the embedded
store's readers share the memory-mapped files (the SQLite file,
``index.mirror``) through the page cache, and writes from any worker
serialise in the file (SQLite's write lock, or PostgreSQL's transactions).

The vector matrix is not in those files (issue 51): the parent makes a folder
in RAM (``/dev/shm/rcpkit-workers-<pid>-*``, else in the temporary folder) and
passes it in ``RCPKIT_HTTP_SHARED_DIR``; the first worker to read the matrix of
an index of 20k rows or more from SQLite writes it there and every other worker
maps that file (``engine/index/_shared_vectors.py``), so the matrix is in RAM
once (issue 31). The parent removes the folder when it exits; a folder left by
a parent that was killed is removed by the next parent once that pid is gone.

The parent waits for the first worker to listen before it announces the
address (a worker writes one byte to ``RCPKIT_HTTP_READY_FD``), restarts a
worker that dies, and on SIGTERM/SIGINT passes the signal on so every worker
drains its in-flight requests, then exits 0. With ``--metrics``, the workers
write their counters to a shared folder (prometheus-client's multiprocess mode,
``PROMETHEUS_MULTIPROC_DIR``) and any worker's ``/metrics`` sums them all.

Sessions (``--stateful``) stick to the worker that opened them: the parent
then serves the socket itself as a thin router (``workers_router``) that sends
each request naming a session to the worker that minted its token, and the
others round-robin; without ``--stateful`` no byte passes through the parent.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "READY_FD_ENV",
    "SHARED_ENV",
    "SOCKET_FD_ENV",
    "WORKER_ENV",
    "WORKERS_ENV",
    "Supervisor",
    "default_workers",
    "mint_prefix",
    "inherited_socket",
    "shared_folder",
    "signal_ready",
    "worker_index",
]

SOCKET_FD_ENV = "RCPKIT_HTTP_SOCKET_FD"
READY_FD_ENV = "RCPKIT_HTTP_READY_FD"
WORKER_ENV = "RCPKIT_HTTP_WORKER"  # this worker's index, 0..N-1
WORKERS_ENV = "RCPKIT_HTTP_WORKERS"  # the default of --workers
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
SHARED_ENV = "RCPKIT_HTTP_SHARED_DIR"  # the RAM folder where workers share the vectors
_SHARED_PREFIX = "rcpkit-workers-"

# A worker that dies this soon after it started is failing to start, not crashing
# under load: the parent backs off before the next try, and gives up after a few.
_EARLY_DEATH = 5.0
_MAX_EARLY_DEATHS = 5
_BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0)


def default_workers() -> int:
    """``$RCPKIT_HTTP_WORKERS``, else one worker per core this process may use."""
    text = os.environ.get(WORKERS_ENV, "").strip()
    if text:
        try:
            count = int(text)
        except ValueError:
            raise ValueError(f"${WORKERS_ENV} takes a positive integer, not {text!r}") from None
        if count < 1:
            raise ValueError(f"${WORKERS_ENV} takes a positive integer, not {text!r}")
        return count
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def worker_index() -> int | None:
    """This process's index among the workers, or None when it is not one."""
    text = os.environ.get(WORKER_ENV)
    return int(text) if text and text.isdigit() else None


def shared_folder() -> Path | None:
    """The folder in RAM this worker shares the vector matrix in (None outside a worker)."""
    text = os.environ.get(SHARED_ENV)
    return Path(text) if text and worker_index() is not None else None


def mint_prefix() -> str:
    """What a session token starts with here: ``<worker>.`` in a worker, else nothing.

    The parent's router (``router.py``) reads it to send the session's requests
    back to the worker that holds the session.
    """
    index = worker_index()
    return "" if index is None else f"{index}."


def inherited_socket() -> socket.socket | None:
    """The listening socket the parent passed down, or None outside a worker."""
    text = os.environ.get(SOCKET_FD_ENV)
    if not text:
        return None
    sock = socket.socket(fileno=int(text))
    sock.setblocking(False)
    return sock


def signal_ready() -> None:
    """Tell the parent this worker accepts connections (once; a no-op elsewhere)."""
    text = os.environ.pop(READY_FD_ENV, None)
    if not text:
        return
    with contextlib.suppress(OSError):
        os.write(int(text), b"1")
    with contextlib.suppress(OSError):
        os.close(int(text))


@dataclass(slots=True)
class _Worker:
    index: int
    process: subprocess.Popen[bytes]
    ready_fd: int  # the parent's read end of this worker's ready pipe
    started: float
    ready: bool = False


@dataclass(slots=True)
class Supervisor:
    """Start ``count`` workers running ``argv`` on ``sock``; keep them up until a signal.

    ``argv`` is the command a worker runs (``python -m rcpkit serve ...``);
    worker i listens on ``sockets[i]``, or on the one socket they all share;
    ``announce`` is called with nothing once the first worker is ready, and
    ``on_stop`` once a signal asks everything to stop;
    ``drain_timeout`` is how long workers get to finish after SIGTERM.
    ``extra_env`` is added to each worker's environment (``{index}`` in a value
    becomes the worker's index).
    """

    argv: Sequence[str]
    count: int
    sockets: Sequence[socket.socket]  # one shared by all, or one per worker
    announce: Callable[[], None]
    drain_timeout: float = 30.0
    extra_env: dict[str, str] = field(default_factory=dict)
    on_stop: Callable[[], None] = lambda: None
    log: Callable[[str], None] = lambda line: print(f"rcpkit: {line}", file=sys.stderr, flush=True)
    _workers: dict[int, _Worker] = field(default_factory=dict)
    _stopping: bool = False
    _early_deaths: int = 0

    def run(self) -> int:
        """Serve until SIGTERM/SIGINT (0 once drained), or a worker that cannot start."""
        with self._metrics_folder(), self._shared_folder(), self._signals() as wakeup:
            first = self._start(0)
            code = self._wait_first_ready(first, wakeup)
            if code is not None:
                return code
            self.announce()
            for index in range(1, self.count):
                self._start(index)
            return self._watch(wakeup)

    # -- the workers

    def _start(self, index: int) -> _Worker:
        read_fd, write_fd = os.pipe()
        sock = self.sockets[index % len(self.sockets)]
        env = dict(os.environ)
        env.update({key: value.format(index=index) for key, value in self.extra_env.items()})
        env[SOCKET_FD_ENV] = str(sock.fileno())
        env[READY_FD_ENV] = str(write_fd)
        env[WORKER_ENV] = str(index)
        env[WORKERS_ENV] = "1"  # a worker never starts workers of its own
        process = subprocess.Popen(list(self.argv), env=env, pass_fds=(sock.fileno(), write_fd))
        os.close(write_fd)
        worker = _Worker(index, process, read_fd, time.monotonic())
        self._workers[index] = worker
        return worker

    def _wait_first_ready(self, worker: _Worker, wakeup: int) -> int | None:
        """None once ``worker`` listens; its exit code (or 0 on a signal) otherwise."""
        while True:
            readable, _, _ = select.select([worker.ready_fd, wakeup], [], [], 1.0)
            if wakeup in readable:
                _drain(wakeup)
            if worker.ready_fd in readable and os.read(worker.ready_fd, 1):
                worker.ready = True
                return None
            if self._stopping:
                self._stop_all()
                return 0
            code = worker.process.poll()
            if code is not None:
                # The first worker failed to start (a bad index, a bad setting): its
                # own message is on stderr already; the parent exits as it did.
                os.close(worker.ready_fd)
                return code or 1

    def _watch(self, wakeup: int) -> int:
        while not self._stopping:
            fds = [wakeup] + [w.ready_fd for w in self._workers.values() if not w.ready]
            readable, _, _ = select.select(fds, [], [], 1.0)
            if wakeup in readable:
                _drain(wakeup)
            for worker in list(self._workers.values()):
                if worker.ready_fd in readable and not worker.ready:
                    worker.ready = bool(os.read(worker.ready_fd, 1))
                if worker.process.poll() is not None and not self._stopping:
                    self._replace(worker)
                    if self._early_deaths > _MAX_EARLY_DEATHS:
                        self.log("workers keep dying at start; stopping")
                        self._stop_all()
                        return 1
        self._stop_all()
        return 0

    def _replace(self, worker: _Worker) -> None:
        code = worker.process.returncode
        with contextlib.suppress(OSError):
            os.close(worker.ready_fd)
        _mark_dead(worker.process.pid, self.extra_env.get(MULTIPROC_ENV))
        early = time.monotonic() - worker.started < _EARLY_DEATH
        self._early_deaths = self._early_deaths + 1 if early else 0
        self.log(f"worker {worker.index} (pid {worker.process.pid}) exited {code}; restarting")
        if early:
            time.sleep(_BACKOFF[min(self._early_deaths, len(_BACKOFF)) - 1])
        self._start(worker.index)

    def _stop_all(self) -> None:
        """SIGTERM every worker; wait for each to drain; kill what is left."""
        self.on_stop()
        for worker in self._workers.values():
            if worker.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.process.send_signal(signal.SIGTERM)
        give_up = time.monotonic() + self.drain_timeout + 10.0
        for worker in self._workers.values():
            try:
                worker.process.wait(timeout=max(0.1, give_up - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            with contextlib.suppress(OSError):
                os.close(worker.ready_fd)

    # -- signals and the metrics folder

    @contextlib.contextmanager
    def _signals(self) -> Iterator[int]:
        """SIGTERM/SIGINT stop the workers; SIGCHLD wakes the watch loop."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        previous_wakeup = signal.set_wakeup_fd(write_fd)

        def stop(signum: int, frame: object) -> None:
            self._stopping = True

        handled = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        previous_child = signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        try:
            yield read_fd
        finally:
            signal.set_wakeup_fd(previous_wakeup)
            for sig, handler in handled.items():
                signal.signal(sig, handler)
            signal.signal(signal.SIGCHLD, previous_child)
            os.close(read_fd)
            os.close(write_fd)

    @contextlib.contextmanager
    def _metrics_folder(self) -> Iterator[None]:
        """A fresh multiprocess folder for the workers' counters, unless one is set."""
        if MULTIPROC_ENV in os.environ or MULTIPROC_ENV in self.extra_env:
            yield
            return
        folder = tempfile.mkdtemp(prefix="rcpkit-metrics-")
        self.extra_env[MULTIPROC_ENV] = folder
        try:
            yield
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @contextlib.contextmanager
    def _shared_folder(self) -> Iterator[None]:
        """A folder in RAM for the vectors the workers share, removed when the parent exits."""
        base = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
        _sweep(base)
        try:
            folder = tempfile.mkdtemp(prefix=f"{_SHARED_PREFIX}{os.getpid()}-", dir=base)
        except OSError:  # not writable: each worker reads its own matrix
            folder = tempfile.mkdtemp(prefix=f"{_SHARED_PREFIX}{os.getpid()}-")
        self.extra_env[SHARED_ENV] = folder
        try:
            yield
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _sweep(base: Path) -> None:
    """Remove the folders of parents that were killed (their pid is gone)."""
    for folder in base.glob(f"{_SHARED_PREFIX}*-*"):
        pid = folder.name[len(_SHARED_PREFIX) :].split("-")[0]
        with contextlib.suppress(OSError):
            if pid.isdigit() and folder.stat().st_uid == os.getuid() and not _alive(int(pid)):
                shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError, OSError):
        while os.read(fd, 512):
            pass


def _mark_dead(pid: int, folder: str | None) -> None:
    """Let a dead worker's live gauges go (prometheus-client's multiprocess mode)."""
    folder = folder or os.environ.get(MULTIPROC_ENV)
    if not folder:
        return
    with contextlib.suppress(ImportError, OSError):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid, folder)  # type: ignore[no-untyped-call]
