"""A local SolrCloud for tests and trials: ZooKeeper and N Solr nodes, one JVM each.

Production users run their own SolrCloud and point rcpkit at it
(``--store solr://HOST:PORT/solr/COLLECTION``); this starts one on 127.0.0.1 the
way ``store/postgres/pgserver.py`` starts a private PostgreSQL. The jars come
from Maven Central through the small pom shipped beside this module
(``cloud/pom.xml``: Solr's test framework, whose ``JettySolrRunner`` runs a real
node from jars alone), resolved once into Maven's own cache (``~/.m2``); the
classpath and the compiled launcher (``cloud/SolrNode.java``) are cached under
the Python environment, keyed by those files' contents, so later runs are
offline. Each node is its own process (so a test can kill one with SIGKILL),
detached from the caller: ``rcpkit solr up`` returns while the cluster runs, and
``rcpkit solr down`` stops it from the pids recorded in its folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rcpkit.engine.store.solr.http import SolrHttp

__all__ = ["Cluster", "Launcher", "Process", "launcher", "start_cluster", "stop_cluster"]

_HERE = Path(__file__).parent
_POM = _HERE / "cloud" / "pom.xml"
_NODE_SOURCE = _HERE / "cloud" / "SolrNode.java"
_SOLR_XML = _HERE / "cloud" / "solr.xml"
CONFIGSET = _HERE / "configset" / "conf"
CONFIGSET_NAME = "rcpkit"
_STATE = "cluster.json"
# A cold JVM on a busy 2-core machine: these are bounds, not expectations.
_START_TIMEOUT = 300.0
_STOP_TIMEOUT = 60.0
_NODE_HEAP = "-Xmx512m"
_ZK_HEAP = "-Xmx128m"


@dataclass(frozen=True, slots=True)
class Launcher:
    """How to start the JVMs: ``java``, the resolved classpath, the compiled launcher."""

    java: str
    classpath: str
    classes: Path


def _cache_root() -> Path:
    """Beside the Python environment when writable (one per venv), else the user's cache."""
    for root in (Path(sys.prefix) / "share" / "rcpkit", Path.home() / ".cache" / "rcpkit"):
        with contextlib.suppress(OSError):
            root.mkdir(parents=True, exist_ok=True)
            if os.access(root, os.W_OK):
                return root
    raise RuntimeError("no writable folder for the SolrCloud launcher's cache")


def launcher() -> Launcher:
    """The classpath and the compiled node launcher, resolved and built on first use.

    Needs Java 17+ and Maven (``mvn``) the first time; Maven Central serves the
    jars. Concurrent callers (test workers) wait for one build.
    """
    java, javac, mvn = shutil.which("java"), shutil.which("javac"), shutil.which("mvn")
    if java is None or javac is None:
        raise RuntimeError("a local SolrCloud needs Java 17 or later (java and javac on PATH)")
    digest = hashlib.sha256(_POM.read_bytes() + _NODE_SOURCE.read_bytes()).hexdigest()[:16]
    folder = _cache_root() / f"solrcloud-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    classpath_file, classes = folder / "classpath.txt", folder / "classes"
    with _locked(folder / ".lock"):
        if not _complete(classpath_file):
            if mvn is None:
                raise RuntimeError("a local SolrCloud needs Maven (mvn) once, to fetch its jars")
            _resolve(mvn, classpath_file)
        classpath = classpath_file.read_text().strip()
        if not (classes / "SolrNode.class").exists():
            _compile(javac, classpath, classes)
    return Launcher(java, classpath, classes)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _complete(classpath_file: Path) -> bool:
    """Whether the recorded classpath's jars are all still in Maven's cache."""
    if not classpath_file.exists():
        return False
    jars = classpath_file.read_text().strip().split(os.pathsep)
    return bool(jars) and all(Path(jar).exists() for jar in jars)


def _resolve(mvn: str, classpath_file: Path) -> None:
    command = [
        mvn, "-q", "-B", "-f", str(_POM), "dependency:build-classpath",
        "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={classpath_file}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not classpath_file.exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        raise RuntimeError("mvn could not resolve Solr's jars: " + " | ".join(tail))


def _compile(javac: str, classpath: str, classes: Path) -> None:
    staging = classes.with_name("classes.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    command = [javac, "-d", str(staging), "-cp", classpath, str(_NODE_SOURCE)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"javac failed on {_NODE_SOURCE.name}: {done.stderr.strip()}")
    shutil.rmtree(classes, ignore_errors=True)
    staging.rename(classes)


@dataclass(slots=True)
class Process:
    """One JVM of the cluster: its pid and port (a node's name in SolrCloud is its port)."""

    pid: int
    port: int
    role: str  # "zookeeper" or "node1", "node2", …


@dataclass(slots=True)
class Cluster:
    """A running local SolrCloud, as recorded in ``DIR/cluster.json``."""

    folder: str
    zookeeper: Process
    nodes: list[Process]
    collection: str
    zk_timeout: int | None = None  # ms; None: solr.xml's (ZooKeeper's session expiry)
    _children: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict, repr=False)

    @property
    def url(self) -> str:
        """The store URL rcpkit takes (``--store``): the first node, the collection."""
        return self.collection_url(self.collection)

    def collection_url(self, name: str) -> str:
        return f"solr://127.0.0.1:{self.nodes[0].port}/solr/{name}"

    def http(self) -> SolrHttp:
        return SolrHttp([f"http://127.0.0.1:{node.port}/solr" for node in self.nodes])

    def save(self) -> None:
        state = {
            "folder": self.folder,
            "zookeeper": asdict(self.zookeeper),
            "nodes": [asdict(node) for node in self.nodes],
            "collection": self.collection,
            "zk_timeout": self.zk_timeout,
        }
        (Path(self.folder) / _STATE).write_text(json.dumps(state, indent=2) + "\n")

    @classmethod
    def load(cls, folder: Path) -> Cluster:
        path = folder / _STATE
        if not path.exists():
            raise ValueError(f"no local SolrCloud recorded in {folder} (no {_STATE})")
        state = json.loads(path.read_text())
        return cls(
            state["folder"],
            Process(**state["zookeeper"]),
            [Process(**node) for node in state["nodes"]],
            state["collection"],
            state.get("zk_timeout"),
        )

    def kill_node(self, position: int) -> None:
        """SIGKILL node ``position`` (a crash: no shutdown, no flush), and reap it."""
        pid = self.nodes[position].pid
        _signal(pid, signal.SIGKILL, self._children)
        _gone(pid, self._children, _STOP_TIMEOUT)
        self._children.pop(pid, None)

    def restart_node(self, position: int) -> None:
        """Start node ``position`` again on its port and folder (it rejoins the cluster)."""
        node = self.nodes[position]
        tools = launcher()
        log = Path(self.folder) / f"{node.role}.log"
        offset = log.stat().st_size if log.exists() else 0
        started = _start_node(
            tools, Path(self.folder), node.role, node.port, self._zk_host(), self.zk_timeout
        )
        self._children[started.pid] = started
        node.pid = started.pid
        _wait_ready(started, log, _START_TIMEOUT, offset)
        self.save()

    def _zk_host(self) -> str:
        return f"127.0.0.1:{self.zookeeper.port}"

    def stop(self) -> None:
        """Stop every node, then ZooKeeper; each JVM gets SIGTERM, then SIGKILL if it lingers."""
        for process in [*self.nodes, self.zookeeper]:
            _signal(process.pid, signal.SIGTERM, self._children)
        for process in [*self.nodes, self.zookeeper]:
            if not _gone(process.pid, self._children, _STOP_TIMEOUT):
                _signal(process.pid, signal.SIGKILL, self._children)
                _gone(process.pid, self._children, _STOP_TIMEOUT)
        with contextlib.suppress(FileNotFoundError):
            (Path(self.folder) / _STATE).unlink()


def start_cluster(
    folder: Path,
    nodes: int = 3,
    shards: int = 2,
    replicas: int = 1,
    collection: str = "rcpkit",
    zk_timeout: int | None = None,
) -> Cluster:
    """ZooKeeper, ``nodes`` Solr nodes, the configset and ``collection``, all on 127.0.0.1.

    ``zk_timeout``: the nodes' ZooKeeper session timeout in ms (how long a killed
    node stays in ``live_nodes``), for test clusters; None keeps ``solr.xml``'s 30 s.
    """
    if nodes < 1 or shards < 1 or replicas < 1:
        raise ValueError("--nodes, --shards and --replicas must be at least 1")
    folder = folder.resolve()
    if (folder / _STATE).exists():
        raise ValueError(f"{folder} already holds a running SolrCloud: rcpkit solr down first")
    folder.mkdir(parents=True, exist_ok=True)
    tools = launcher()
    children: dict[int, subprocess.Popen[bytes]] = {}
    zk_port = _free_port()
    zookeeper = _start_zookeeper(tools, folder, zk_port)
    children[zookeeper.pid] = zookeeper
    cluster = Cluster(
        str(folder), Process(zookeeper.pid, zk_port, "zookeeper"), [], collection, zk_timeout
    )
    cluster._children = children
    try:
        _wait_zookeeper(zookeeper, zk_port, folder / "zookeeper.log")
        started = []
        for position in range(nodes):
            role, port = f"node{position + 1}", _free_port()
            process = _start_node(tools, folder, role, port, cluster._zk_host(), zk_timeout)
            children[process.pid] = process
            cluster.nodes.append(Process(process.pid, port, role))
            started.append((process, folder / f"{role}.log"))
        for process, log in started:
            _wait_ready(process, log, _START_TIMEOUT)
        cluster.save()
        http = cluster.http()
        upload_configset(http)
        create_collection(http, collection, shards, replicas)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def stop_cluster(folder: Path) -> None:
    Cluster.load(folder.resolve()).stop()


def configset_zip() -> bytes:
    """The configset rcpkit ships, zipped as Solr's configset upload takes it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(CONFIGSET.iterdir()):
            archive.write(path, path.name)
    return buffer.getvalue()


def upload_configset(http: SolrHttp) -> None:
    query = urllib.parse.urlencode(
        {"action": "UPLOAD", "name": CONFIGSET_NAME, "overwrite": "true"}
    )
    http.post_bytes(f"/admin/configs?{query}", configset_zip(), "application/octet-stream")


def create_collection(http: SolrHttp, name: str, shards: int, replicas: int) -> None:
    """Create ``name`` on the rcpkit configset and wait until every replica is active."""
    http.admin(
        "CREATE",
        name=name,
        numShards=shards,
        replicationFactor=replicas,
        **{"collection.configName": CONFIGSET_NAME, "waitForFinalState": "true"},
    )


def delete_collection(http: SolrHttp, name: str) -> None:
    http.admin("DELETE", name=name)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _spawn(command: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    # Its own session: the cluster outlives `rcpkit solr up`, and a terminal's ^C to the
    # caller does not reach it.
    with log.open("ab") as out:
        return subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _start_zookeeper(tools: Launcher, folder: Path, port: int) -> subprocess.Popen[bytes]:
    data = folder / "zookeeper"
    data.mkdir(exist_ok=True)
    command = [
        tools.java, _ZK_HEAP, "-XX:+UseSerialGC", "-cp", tools.classpath,
        "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=ruok",
        f"-Drcpkit.solrcloud={folder}",
        "org.apache.zookeeper.server.ZooKeeperServerMain", str(port), str(data),
    ]  # fmt: skip
    return _spawn(command, folder / "zookeeper.log")


def _start_node(
    tools: Launcher, folder: Path, role: str, port: int, zk_host: str, zk_timeout: int | None
) -> subprocess.Popen[bytes]:
    home = folder / role
    home.mkdir(exist_ok=True)
    shutil.copyfile(_SOLR_XML, home / "solr.xml")
    classpath = os.pathsep.join([str(tools.classes), tools.classpath])
    timeout = [] if zk_timeout is None else [f"-DzkClientTimeout={zk_timeout}"]
    command = [
        tools.java, _NODE_HEAP, "-XX:+UseSerialGC", "-cp", classpath, *timeout,
        f"-Dsolr.log.dir={folder}", f"-Drcpkit.solrcloud={folder}",
        "SolrNode", str(home), str(port), zk_host,
    ]  # fmt: skip
    return _spawn(command, folder / f"{role}.log")


def _wait_zookeeper(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ZooKeeper exited: {_tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as s:
            s.sendall(b"ruok")
            if s.recv(4) == b"imok":
                return
        time.sleep(0.2)
    raise RuntimeError(f"ZooKeeper did not answer within {_START_TIMEOUT:.0f} s: {_tail(log)}")


def _wait_ready(
    process: subprocess.Popen[bytes], log: Path, timeout: float, offset: int = 0
) -> None:
    """Until the node prints READY past ``offset`` of its log, or fail with the log's tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_bytes()[offset:] if log.exists() else b""
        if b"READY " in text:
            return
        if process.poll() is not None:
            raise RuntimeError(f"Solr node {log.stem} exited: {_tail(log)}")
        time.sleep(0.2)
    raise RuntimeError(f"Solr node {log.stem} did not start within {timeout:.0f} s: {_tail(log)}")


def _tail(log: Path) -> str:
    lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
    return " | ".join(lines[-5:]) or "(no output)"


def _signal(pid: int, number: int, children: dict[int, subprocess.Popen[bytes]]) -> None:
    with contextlib.suppress(ProcessLookupError):
        if pid in children or _ours(pid):
            os.kill(pid, number)


def _ours(pid: int) -> bool:
    """Whether ``pid`` is still one of our JVMs (not a pid the system reused)."""
    try:
        return b"-Drcpkit.solrcloud=" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _gone(pid: int, children: dict[int, subprocess.Popen[bytes]], timeout: float) -> bool:
    child = children.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _ours(pid):
            return True
        time.sleep(0.1)
    return False
