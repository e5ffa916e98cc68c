from __future__ import annotations

import math

import msgspec
import pytest

from rcpkit import codec
from rcpkit.codec import Batch, Invalid, Notification, Request, Response
from rcpkit.protocol import ErrorCode


def code_of(frame: object) -> int:
    assert isinstance(frame, Invalid)
    return frame.error.code


@pytest.mark.parametrize("id", [1, "a", 1.5, 0, -7, 10**20])
def test_request_ids_keep_their_json_type(id: object) -> None:
    frame = codec.decode(msgspec.json.encode({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    assert isinstance(frame, Request)
    assert frame.id == id
    assert type(frame.id) is type(id)
    echoed = msgspec.json.decode(codec.encode_result(frame.id, {}))
    assert type(echoed["id"]) is type(id)


def test_valid_json_nested_past_the_decoder_is_payload_too_large_not_a_parse_error() -> None:
    frame = codec.decode(b"[" * 10_000 + b"]" * 10_000)
    assert isinstance(frame, Invalid) and frame.id is None
    assert code_of(frame) == ErrorCode.PAYLOAD_TOO_LARGE


def test_a_frame_with_few_brackets_is_marked_shallow_and_a_bracketful_one_is_not() -> None:
    shallow = codec.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[1]}}')
    deep = codec.decode(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * 70 + b"]" * 70 + b"}}"
    )
    assert isinstance(shallow, Request) and shallow.shallow
    assert isinstance(deep, Request) and not deep.shallow


@pytest.mark.parametrize(
    "line",
    [
        b"{not json",
        b"\xff\xfe{}",
        b'{"a": "\\ud800"}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e400}}',
        b"\xef\xbb\xbf{}",
    ],
)
def test_undecodable_input_is_a_parse_error_value(line: bytes) -> None:
    frame = codec.decode(line)
    assert code_of(frame) == ErrorCode.PARSE_ERROR
    assert isinstance(frame, Invalid)
    assert frame.id is None


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1},
        [1],
    ],
)
def test_malformed_requests_are_invalid_requests(message: object) -> None:
    frame = codec.decode(msgspec.json.encode(message))
    if isinstance(frame, Batch):
        frame = frame.members[0]
    assert code_of(frame) == ErrorCode.INVALID_REQUEST


def test_an_invalid_request_echoes_a_usable_id() -> None:
    frame = codec.decode(b'{"jsonrpc":"1.0","id":9,"method":"ping"}')
    assert isinstance(frame, Invalid)
    assert frame.id == 9


def test_positional_params_are_invalid_params() -> None:
    frame = codec.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}')
    assert code_of(frame) == ErrorCode.INVALID_PARAMS


def test_a_message_without_id_is_a_notification() -> None:
    frame = codec.decode(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}}')
    assert frame == Notification("notifications/x", {"a": 1})


def test_responses_are_recognised() -> None:
    frame = codec.decode(b'{"jsonrpc":"2.0","id":3,"result":{}}')
    assert frame == Response(3, {}, None)


def test_an_empty_batch_is_one_invalid_request() -> None:
    assert code_of(codec.decode(b"[]")) == ErrorCode.INVALID_REQUEST


def test_non_finite_floats_never_reach_the_wire() -> None:
    data = codec.encode_result(1, {"score": math.nan, "v": [math.inf, -math.inf, 1.0]})
    assert b"NaN" not in data
    assert b"Infinity" not in data
    result = msgspec.json.decode(data)["result"]
    assert result["score"] == 0.0
    assert all(math.isfinite(value) for value in result["v"])


def test_an_encoded_message_is_one_line() -> None:
    data = codec.encode_result(1, {"text": "two\nlines"})
    assert b"\n" not in data
