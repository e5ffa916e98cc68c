"""Metrics, access logs and trace ids of real ``rcpkit serve --http`` processes (issue 17 §2)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from gateway_support import PYTHON, build_index
from observe_support import access_lines, free_port, logged_http, rcp, sample

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


@pytest.fixture(scope="module")
def persistent(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    command = build_index(tmp_path_factory.mktemp("notes"))
    return [arg for arg in command if arg != "--stdio"]


def _http(command: list[str], *extra: str) -> list[str]:
    return [*command, "--http", "127.0.0.1:0", *extra]


def test_metrics_on_their_own_port_count_requests_errors_and_pipeline_stages(
    tmp_path: Path, persistent: list[str]
) -> None:
    port = free_port()
    command = _http(persistent, "--metrics", f"127.0.0.1:{port}")
    with logged_http(command, tmp_path / "stderr") as url:
        assert rcp(url, "retrieve", {"query": "reciprocal rank fusion", "k": 2}).status_code == 200
        rcp(url, "retrieve", {"query": "fruit", "k": 0})  # invalid: k >= 1
        assert rcp(url, "ping", {}).status_code == 200  # the transport's fast path
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
        public = httpx.get(url.rsplit("/", 1)[0] + "/metrics", timeout=10)
    assert scraped.status_code == 200
    text = scraped.text
    assert sample(text, "rcp_requests_total", method="retrieve", code="0") == 1.0
    assert sample(text, "rcp_request_errors_total", method="retrieve", code="-32602") == 1.0
    assert sample(text, "rcp_request_duration_seconds_count", method="retrieve") == 2.0
    assert sample(text, "rcp_stage_duration_seconds_count", method="retrieve", stage="recall")
    assert sample(text, "rcp_requests_in_flight") == 0.0
    assert sample(text, "rcp_requests_total", method="ping", code="0") == 1.0
    assert sample(text, "rcp_http_responses_total", status="200") == 3.0
    assert sample(text, "rcp_index_documents") == 2.0
    assert sample(text, "rcp_index_version") is not None
    assert public.status_code == 404  # off the public port unless asked for


def test_public_metrics_are_behind_the_same_auth_as_rcp(tmp_path: Path) -> None:
    command = [PYTHON, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
    command = _http(command, "--metrics", "public", "--auth-file", str(_tokens(tmp_path)))
    with logged_http(command, tmp_path / "stderr") as url:
        root = url.rsplit("/", 1)[0]
        anonymous = httpx.get(f"{root}/metrics", timeout=10)
        authorised = httpx.get(
            f"{root}/metrics", headers={"Authorization": "Bearer s3cret-token"}, timeout=10
        )
    assert anonymous.status_code == 401
    assert authorised.status_code == 200
    assert "rcp_requests_in_flight" in authorised.text


def test_shed_load_is_counted_by_reason(tmp_path: Path) -> None:
    port = free_port()
    command = [PYTHON, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
    command = _http(
        command, "--rate-limit", "0.001", "--rate-burst", "1", "--metrics", f"127.0.0.1:{port}"
    )
    with logged_http(command, tmp_path / "stderr") as url:
        first = rcp(url, "retrieve", {"query": "bm25", "k": 1})
        second = rcp(url, "retrieve", {"query": "bm25", "k": 1})
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    assert (first.status_code, second.status_code) == (200, 429)
    assert sample(text, "rcp_shed_total", reason="rate") == 1.0
    assert sample(text, "rcp_http_responses_total", status="429") == 1.0


def test_an_access_line_per_request_carries_the_traceparent_id_and_no_query_text(
    tmp_path: Path,
) -> None:
    stderr = tmp_path / "stderr"
    command = [PYTHON, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
    with logged_http(_http(command, "--access-log", "-"), stderr) as url:
        rcp(url, "retrieve", {"query": "alice@example.com bm25", "k": 1}, traceparent=TRACEPARENT)
        rcp(url, "retrieve", {"query": "bm25", "k": 1, "_meta": {"traceId": "mine-1"}})
        rcp(url, "nonsense", {})
    lines = access_lines(stderr)
    assert [(line["method"], line["status"], line["code"]) for line in lines] == [
        ("retrieve", 200, 0),
        ("retrieve", 200, 0),
        ("nonsense", 200, -32004),
    ]
    assert [line["traceId"] for line in lines[:2]] == [TRACE, "mine-1"]
    assert len(lines[2]["traceId"]) == 32  # minted when the caller sent none
    assert all(line["latencyMs"] >= 0 and "tenant" in line for line in lines)
    assert "example.com" not in stderr.read_text()
    assert all("query" not in line for line in lines)


def test_log_queries_opts_in_to_redacted_query_text(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr"
    command = [PYTHON, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
    with logged_http(_http(command, "--log-queries"), stderr) as url:
        query = "bm25 for alice@example.com card 4111 1111 1111 1111 password=hunter2"
        rcp(url, "retrieve", {"query": query, "k": 1})
    (line,) = access_lines(stderr)
    assert line["query"] == "bm25 for [email] card [number] password=[secret]"
    assert "hunter2" not in stderr.read_text()


def test_a_stdio_server_writes_access_lines_with_the_tenantless_request(tmp_path: Path) -> None:
    import subprocess

    log = tmp_path / "access.jsonl"
    command = [PYTHON, "-m", "rcpkit", "serve", "--engine", "keyword", "--sample"]
    frames = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,'
        b'"client":{"name":"t","version":"1"},"capabilities":{}}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"retrieve","params":{"query":"bm25","k":1,'
        b'"_meta":{"traceId":"t-2"}}}\n'
    )
    subprocess.run(
        [*command, "--access-log", str(log)], input=frames, capture_output=True, timeout=60
    )
    lines = access_lines(log)
    assert [(line["method"], line["code"], line["traceId"]) for line in lines][1:] == [
        ("retrieve", 0, "t-2")
    ]
    assert "status" not in lines[1]


def _tokens(folder: Path) -> Path:
    path = folder / "tokens.toml"
    path.write_text('[[token]]\nname = "ops"\ntoken = "s3cret-token"\n')
    return path
