"""``rcpkit eval`` as a real process: spawned engine, a stdio command, HTTP, and --compare."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eval_support import write_dataset

FAST = ["--embedder", "hashing:64", "--no-progress"]


def rcpkit(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rcpkit", *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_the_spawned_engine_is_loaded_over_the_wire_and_every_stage_is_measured(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    record = tmp_path / "run.json"
    chart = tmp_path / "p.png"
    done = rcpkit("eval", str(data), *FAST, "--json", str(record), "--plot", str(chart))
    assert done.returncode == 0, done.stderr
    assert "tiny: 25 documents, 6 judged queries; rcpkit" in done.stdout
    result = json.loads(record.read_text())
    keys = [run["key"] for run in result["runs"]]
    assert keys[:6] == ["default", "sparse", "dense", "hybrid-rrf", "hybrid-weighted",
                        "hybrid-convex"]  # fmt: skip
    assert {"mmr", "rewrite-multi-query"} <= set(keys)
    assert "rerank-colbert" not in keys  # MaxSim is opt-in (issue 16): no rerank stage
    assert all(run["failedQueries"] == 0 for run in result["runs"])
    assert result["indexVersion"] is not None  # every query was pinned to one snapshot
    by_key = {run["key"]: run for run in result["runs"]}
    # The topics share no words, so lexical recall finds each query's documents.
    assert by_key["sparse"]["aggregate"]["R@50"] == 1.0
    assert by_key["sparse"]["aggregate"]["nDCG@10"] > 0.8
    assert result["baseline"]["aggregate"]["nDCG@10"] > 0.8
    assert by_key["sparse"]["ranking"]["q3"][0].startswith("shell")
    assert chart.read_bytes()[:4] == b"\x89PNG"

    again = rcpkit("eval", str(data), "--stages", "lexical,default", "--markdown", "--json",
                   str(tmp_path / "two.json"), *FAST)  # fmt: skip
    assert again.returncode == 0, again.stderr
    # "lexical" is the old spelling of the spec's "sparse": accepted, shown as "sparse".
    assert [r["key"] for r in json.loads((tmp_path / "two.json").read_text())["runs"]] == [
        "sparse",
        "default",
    ]
    diff = rcpkit("eval", "--compare", f"{record}:sparse", f"{record}:dense")
    assert diff.returncode == 0, diff.stderr
    assert re.search(r"A = sparse only, B = dense only; nDCG@10 over 6 queries", diff.stdout)


def test_any_stdio_server_is_evaluated_with_the_stages_it_offers(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    server = [sys.executable, "-m", "rcpkit", "serve", "--engine", "keyword"]
    done = rcpkit("eval", str(data), "--no-progress", "--json", str(tmp_path / "k.json"),
                  "--", *server)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "k.json").read_text())
    assert [run["key"] for run in result["runs"]] == ["default", "sparse"]
    assert result["server"].startswith("rcpkit-keyword")
    assert result["runs"][1]["aggregate"]["R@50"] > 0.9  # no stemmer: "wings" misses "wing"


def test_the_min_ratio_gate_fails_the_command_when_it_is_not_met(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    done = rcpkit("eval", str(data), *FAST, "--stages", "dense", "--min-ratio", "1.0")
    assert done.returncode == 1
    assert "no default run" in done.stderr
    wrong = rcpkit("eval", str(tmp_path), *FAST)
    assert wrong.returncode == 2
    assert "is not a BEIR-layout dataset" in wrong.stderr
    unknown = rcpkit("eval", str(data), *FAST, "--stages", "nope")
    assert unknown.returncode == 2
    assert "the server offers no stage nope" in unknown.stderr


def test_an_http_server_is_evaluated_over_http(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    # Without auth, HTTP serves read-only unless writes are allowed explicitly (issue 13).
    command = [sys.executable, "-m", "rcpkit", "serve", "--http", "127.0.0.1:0", "--create",
               "--index", str(tmp_path / "idx"), "--embedder", "hashing:64",
               "--allow-unauthenticated-writes"]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = _announced_url(server)
        done = rcpkit("eval", str(data), "--http", url, "--stages", "default,lexical",
                      "--no-progress", "--json", str(tmp_path / "h.json"))  # fmt: skip
        assert done.returncode == 0, done.stderr
        result = json.loads((tmp_path / "h.json").read_text())
        assert result["runs"][1]["aggregate"]["R@50"] == 1.0
    finally:
        server.kill()
        server.wait(10)
        assert server.stderr is not None
        server.stderr.close()


def _announced_url(server: subprocess.Popen[bytes], timeout: float = 30.0) -> str:
    assert server.stderr is not None
    fd, seen = server.stderr.fileno(), b""
    deadline = time.monotonic() + timeout
    while not (match := re.search(rb"serving RCP over HTTP on (\S+)", seen)):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            raise AssertionError(f"the server did not start: {seen.decode()}")
        seen += chunk
    return match.group(1).decode()


def test_an_engine_with_a_graph_is_also_measured_through_the_graph_method(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    record = tmp_path / "g.json"
    done = rcpkit("eval", str(data), *FAST, "--graph", "regex", "--stages", "graph-local",
                  "--json", str(record))  # fmt: skip
    assert done.returncode == 0, done.stderr
    (graph,) = json.loads(record.read_text())["runs"]
    assert graph["key"] == "graph-local"
    assert graph["failedQueries"] == 0
    assert graph["aggregate"]["nDCG@10"] > 0  # entity seeds reach some judged documents


DYING_SERVER = """
import os
from rcpkit import App, RequestContext
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit

app = App("dying", "1.0")
answered = 0

@app.retrieve(max_k=100)
def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
    global answered
    answered += 1
    if answered > 2:
        os._exit(3)
    return m.RetrieveResult(hits=[Hit(id="wing0", score=1.0)])

app.run_stdio()
"""


def test_a_server_that_dies_mid_run_is_a_one_line_error_not_a_table_or_a_traceback(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    script = tmp_path / "dying.py"
    script.write_text(DYING_SERVER)
    done = rcpkit("eval", str(data), "--no-progress", "--", sys.executable, str(script))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "exited with code 3" in done.stderr
    assert done.stdout == ""  # no table of zeros


def test_counts_below_one_are_usage_errors_before_any_server_starts(tmp_path: Path) -> None:
    from rcpkit.evaluation import load_dataset

    data = write_dataset(tmp_path / "tiny")
    # subset(-1) used to keep all but the last query; subset(0) left nothing to measure.
    for count in ("0", "-1"):
        done = rcpkit("eval", str(data), *FAST, "--queries", count)
        assert done.returncode == 2, done.stderr
        assert "--queries is at least 1" in done.stderr
    for option in ("--depth", "--concurrency"):
        done = rcpkit("eval", str(data), *FAST, option, "0")
        assert done.returncode == 2
        assert f"{option} is at least 1" in done.stderr
    assert list(load_dataset(data).subset(5).queries) == ["q1", "q2", "q3", "q4", "q5"]


ORACLE_SERVER = """
from rcpkit import App, RequestContext
from rcpkit.protocol import messages as m
from rcpkit.protocol.content import Hit

app = App("oracle", "1.0")

@app.retrieve(max_k=100)
def retrieve(params: m.RetrieveParams, ctx: RequestContext) -> m.RetrieveResult:
    return m.RetrieveResult(hits=[Hit(id=f"wing{n}", score=1.0) for n in range(4)])

app.run_stdio()
"""


def test_the_min_ratio_gate_is_not_met_when_the_baseline_scores_zero(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    (data / "queries.jsonl").write_text('{"_id": "q1", "text": "zebra quokka"}\n')  # no BM25 match
    script = tmp_path / "oracle.py"
    script.write_text(ORACLE_SERVER)
    record = tmp_path / "o.json"
    done = rcpkit("eval", str(data), "--no-progress", "--min-ratio", "1.1", "--json", str(record),
                  "--", sys.executable, str(script))  # fmt: skip
    assert done.returncode == 1, done.stderr  # NaN >= 1.1 is no pass
    assert "the baseline's nDCG@10 is 0, so there is no ratio" in done.stderr
    assert json.loads(record.read_text())["runs"][0]["ratioToBaseline"] is None


def test_load_always_against_a_read_only_server_is_an_error_not_a_silent_skip(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    server = [sys.executable, "-m", "rcpkit", "serve", "--read-only", "--create", "--index",
              str(tmp_path / "idx"), "--embedder", "hashing:64"]  # fmt: skip
    done = rcpkit("eval", str(data), "--no-progress", "--load", "always", "--", *server)
    assert done.returncode == 2, done.stderr
    assert "--load always, but the server is read-only" in done.stderr
    assert done.stdout == ""


def test_a_missing_eval_extra_is_named_before_anything_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rcpkit.cli import main

    data = write_dataset(tmp_path / "tiny")
    monkeypatch.setitem(sys.modules, "bm25s", None)  # `import bm25s` now fails
    assert main(["eval", str(data), *FAST]) == 2
    err = capsys.readouterr().err
    assert "pip install 'rcpkit[eval]'" in err and "bm25s" in err
    monkeypatch.delitem(sys.modules, "bm25s")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["eval", str(data), *FAST, "--plot", str(tmp_path / "p.png")]) == 2
    assert "matplotlib" in capsys.readouterr().err


def test_an_output_file_in_a_missing_folder_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rcpkit.cli import main

    data = write_dataset(tmp_path / "tiny")
    for option in ("--json", "--plot"):
        assert main(["eval", str(data), *FAST, option, str(tmp_path / "nope" / "out")]) == 2
        captured = capsys.readouterr()
        assert f"{option}: the folder {tmp_path / 'nope'} does not exist" in captured.err
        assert captured.out == ""  # nothing was run


def test_a_token_variable_that_is_not_set_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rcpkit.cli import main

    data = write_dataset(tmp_path / "tiny")
    monkeypatch.delenv("EVAL_TOKEN_NOT_SET", raising=False)
    args = ["eval", str(data), "--no-progress", "--http", "http://127.0.0.1:9/rcp"]
    assert main([*args, "--token-env", "EVAL_TOKEN_NOT_SET"]) == 2
    assert "--token-env: $EVAL_TOKEN_NOT_SET is not set" in capsys.readouterr().err


def test_engine_options_with_another_server_are_refused_not_ignored(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "tiny")
    server = [sys.executable, "-m", "rcpkit", "serve"]
    done = rcpkit("eval", str(data), "--no-progress", "--index", str(tmp_path / "idx"),
                  "--embedder", "hashing:64", "--", *server)  # fmt: skip
    assert done.returncode == 2
    assert "--index, --embedder shape the engine rcpkit eval spawns" in done.stderr


def test_stage_lists_allow_spaces_and_an_empty_one_is_not_the_full_sweep(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    record = tmp_path / "s.json"
    done = rcpkit("eval", str(data), *FAST, "--stages", "sparse, dense", "--json", str(record))
    assert done.returncode == 0, done.stderr
    assert [run["key"] for run in json.loads(record.read_text())["runs"]] == ["sparse", "dense"]
    for empty in ("", ","):  # e.g. an unset $STAGES: not every stage, rerank included
        done = rcpkit("eval", str(data), *FAST, "--stages", empty)
        assert done.returncode == 2
        assert "--stages names no stage" in done.stderr


def test_progress_is_plain_lines_on_a_redirected_stderr_from_the_first_second(
    tmp_path: Path,
) -> None:
    data = write_dataset(tmp_path / "tiny")
    server = [sys.executable, "-m", "rcpkit", "serve", "--engine", "keyword"]
    done = rcpkit("eval", str(data), "--stages", "sparse", "--", *server)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"eval: reading {data}"
    assert lines[1].startswith("eval: 25 documents, 6 queries; connecting to ")
    assert re.search(r"^eval index/add: documents 24/24 .* in \d:\d\d:\d\d$", done.stderr, re.M)
    assert re.search(r"^eval sparse: queries 6/6 .* in \d:\d\d:\d\d$", done.stderr, re.M)
    assert "\r" not in done.stderr  # no bar redraws in a log
