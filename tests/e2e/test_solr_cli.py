"""``rcpkit solr up|down``: a local SolrCloud from the project's own tooling (issue 48).

The real CLI as a child process: ``up`` returns once ZooKeeper, the nodes (each
its own JVM) and the collection are up, prints the store URL and leaves the
cluster running; the collection answers through every node; killing one node
leaves the others serving; ``down`` stops every JVM it started.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        not (shutil.which("java") and shutil.which("mvn")) and not os.environ.get("CI"),
        reason="a local SolrCloud needs Java 17 and Maven",
    ),
]


def _rcpkit(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True, text=True, timeout=800, check=False, env=environment,
    )  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        return b"-Drcpkit.solrcloud=" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=60) as response:
        found: dict[str, object] = json.load(response)
        return found


def test_up_serves_the_collection_from_separate_node_processes_until_down(tmp_path: Path) -> None:
    folder = tmp_path / "cloud"
    started = _rcpkit(
        "solr", "up", "--dir", str(folder), "--nodes", "2", "--shards", "2", "--collection", "docs"
    )
    state_file = folder / "cluster.json"
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        match = re.fullmatch(r"solr://127\.0\.0\.1:(\d+)/solr/docs", url)
        assert match, url
        state = json.loads(state_file.read_text())
        nodes = state["nodes"]
        pids = [state["zookeeper"]["pid"], *(node["pid"] for node in nodes)]
        assert len(set(pids)) == 3 and all(_alive(pid) for pid in pids)

        status = _get(f"http://127.0.0.1:{nodes[1]['port']}/solr/admin/collections"
                      "?action=CLUSTERSTATUS&wt=json")["cluster"]  # fmt: skip
        assert isinstance(status, dict)
        assert len(status["live_nodes"]) == 2
        shards = status["collections"]["docs"]["shards"]
        assert sorted(shards) == ["shard1", "shard2"]
        hosts = {
            replica["node_name"] for shard in shards.values()
            for replica in shard["replicas"].values()
        }  # fmt: skip
        assert len(hosts) == 2  # the two shards live in different JVMs

        # A crash of one node: the other still answers for the cluster.
        os.kill(nodes[1]["pid"], 9)
        alive = _get(f"http://127.0.0.1:{nodes[0]['port']}/solr/admin/collections"
                     "?action=CLUSTERSTATUS&wt=json")["cluster"]  # fmt: skip
        assert isinstance(alive, dict) and alive["collections"]["docs"]

        assert _rcpkit("solr", "up", "--dir", str(folder)).returncode == 2  # already running
    finally:
        stopped = _rcpkit("solr", "down", "--dir", str(folder))
    assert stopped.returncode == 0, stopped.stderr
    assert not state_file.exists()
    assert not any(_alive(pid) for pid in pids)


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    nothing = _rcpkit("solr", "down", "--dir", str(tmp_path))
    assert nothing.returncode == 2
    assert nothing.stderr.strip().startswith("rcpkit: no local SolrCloud recorded")
    assert len(nothing.stderr.strip().splitlines()) == 1
    zero = _rcpkit("solr", "up", "--dir", str(tmp_path / "c"), "--nodes", "0")
    assert zero.returncode == 2 and "Traceback" not in zero.stderr
    # A store URL that is malformed, or names no reachable node: one line, exit 2.
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for url in ("solr://127.0.0.1:1/nothing", f"solr://127.0.0.1:{port}/solr/docs"):
        done = _rcpkit("stats", "--store", url, "--index", str(tmp_path / "idx"))
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("rcpkit: ") and len(done.stderr.splitlines()) == 1
