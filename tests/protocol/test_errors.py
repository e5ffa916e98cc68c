from __future__ import annotations

from rcpkit.protocol import ErrorCode, RCPError, is_retryable


def test_every_code_of_section_12_has_its_symbol() -> None:
    codes = {code.name: code.value for code in ErrorCode}
    assert codes["UNKNOWN_METHOD"] == -32004
    assert codes["CONFLICT"] == -32016
    assert len(codes) == 18


def test_error_data_uses_the_conventional_field_names() -> None:
    error = RCPError(ErrorCode.RATE_LIMITED, "slow down", retry_after_ms=250, retryable=True)
    assert error.to_wire() == {
        "code": -32011,
        "message": "slow down",
        "data": {"retryable": True, "retryAfterMs": 250},
    }


def test_a_wire_error_round_trips() -> None:
    wire = {"code": -32602, "message": "bad", "data": {"field": "k", "other": 1}}
    error = RCPError.from_wire(wire)
    assert (error.code, error.field, error.extra) == (-32602, "k", {"other": 1})
    assert error.to_wire() == {"code": -32602, "message": "bad", "data": {"other": 1, "field": "k"}}


def test_retryability_follows_section_12_2() -> None:
    assert is_retryable(ErrorCode.RATE_LIMITED)
    assert is_retryable(ErrorCode.TIMEOUT)
    assert not is_retryable(ErrorCode.INVALID_PARAMS)
    assert not is_retryable(ErrorCode.PAYLOAD_TOO_LARGE)
