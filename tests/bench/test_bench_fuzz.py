"""The R1 fuzz campaign at smoke scale: a few thousand hostile frames, every one accounted for."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from rcpkit_bench.fuzz import fuzz_http, fuzz_stdio
from rcpkit_bench.fuzz_frames import FrameGenerator

sys.path.append(str(Path(__file__).parent.parent / "client"))
sys.path.append(str(Path(__file__).parent.parent / "gateway"))
from client_support import announced_http, http_server_command
from gateway_support import build_index

PYTHON = sys.executable


def test_the_generator_is_deterministic_and_covers_every_kind() -> None:
    first = [FrameGenerator(7).next() for _ in range(1)]
    again = [FrameGenerator(7).next() for _ in range(1)]
    assert [s.lines for s in first] == [s.lines for s in again]
    generator = FrameGenerator(3)
    kinds = {generator.next().kind for _ in range(3000)}
    assert kinds >= {
        "valid",
        "wrong-type",
        "unicode",
        "envelope",
        "bytes",
        "batch",
        "cancel-storm",
        "deep",
        "huge",
        "notification",
        "unknown-method",
    }


def test_hostile_frames_over_stdio_to_the_keyword_engine_are_each_answered_once() -> None:
    command = [PYTHON, "-m", "rcpkit", "serve", "--stdio", "--engine", "keyword", "--sample"]
    audit = fuzz_stdio(command, 3000, seed=101)
    assert audit.clean, (audit.summary(), audit.examples)
    assert audit.requests > 1500 and audit.answered == audit.requests


def test_hostile_frames_over_stdio_to_the_persistent_engine_are_each_answered_once(
    tmp_path: Path,
) -> None:
    audit = fuzz_stdio(build_index(tmp_path), 2000, seed=102)
    assert audit.clean, (audit.summary(), audit.examples)
    assert audit.codes[-32602] > 100  # the frames did reach params validation


@pytest.mark.parametrize("engine", [["--engine", "keyword", "--sample"]])
def test_hostile_frames_over_http_get_json_answers_and_never_an_internal_error(
    engine: list[str],
) -> None:
    with announced_http(http_server_command(*engine)) as (url, _):
        audit = fuzz_http(url, 300, seed=103, connections=2)
    assert audit.clean, (audit.summary(), audit.examples)


def test_no_generated_request_id_is_sent_in_two_frames() -> None:
    # The full-scale run of 2026-12-02 reported 7 ids "answered twice": a flipped
    # byte had turned a frame's id into another frame's, so the server rightly
    # answered each frame once. The ledger counts answers per id; ids must be unique.
    sent: Counter[bytes] = Counter()
    for seed in (11, 12):
        generator = FrameGenerator(seed, huge_bytes=1 << 10)
        for _ in range(4_000):
            for line in generator.next().lines:
                try:
                    decoded = json.loads(line.decode("utf-8", "surrogatepass").lstrip("\ufeff"))
                except (ValueError, RecursionError):  # deep-nesting frames
                    continue
                for member in decoded if isinstance(decoded, list) else [decoded]:
                    if not isinstance(member, dict) or "method" not in member:
                        continue
                    id = member.get("id")
                    if isinstance(id, str | int | float) and not isinstance(id, bool):
                        sent[json.dumps([seed, id]).encode()] += 1
    assert [id for id, count in sent.items() if count > 1] == []
