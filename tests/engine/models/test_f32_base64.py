"""§7.3.1 `f32-base64`: little-endian float32, RFC 4648 with padding, exact length."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from rcpkit.engine.models import decode_f32_base64, encode_f32_base64


def test_a_vector_survives_a_base64_round_trip_bit_for_bit() -> None:
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32)
    decoded = decode_f32_base64(encode_f32_base64(vector), 384)
    assert decoded.dtype == np.float32
    np.testing.assert_array_equal(decoded, vector)


def test_the_encoding_is_little_endian_float32_with_padding() -> None:
    blob = encode_f32_base64([1.0])
    assert base64.b64decode(blob) == b"\x00\x00\x80\x3f"
    assert blob == "AACAPw=="


def test_big_endian_input_is_still_written_little_endian() -> None:
    vector = np.array([1.5, -2.0], dtype=">f4")
    assert decode_f32_base64(encode_f32_base64(vector), 2).tolist() == [1.5, -2.0]


def test_a_blob_of_the_wrong_length_is_rejected() -> None:
    blob = encode_f32_base64(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="expected 16"):
        decode_f32_base64(blob, 4)


def test_text_that_is_not_padded_base64_is_rejected() -> None:
    with pytest.raises(ValueError, match="invalid f32-base64"):
        decode_f32_base64("AACAPw", 1)
    with pytest.raises(ValueError, match="invalid f32-base64"):
        decode_f32_base64("AACA*w==", 1)


def test_only_one_dimensional_vectors_are_encoded() -> None:
    with pytest.raises(ValueError, match="1-D"):
        encode_f32_base64(np.zeros((2, 2), np.float32))
