"""Vector helpers: L2 normalisation and the §7.3.1 `f32-base64` wire encoding."""

from __future__ import annotations

import base64
import binascii

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._interfaces import Vectors

__all__ = ["decode_f32_base64", "encode_f32_base64", "l2_normalize"]

# §7.3.1: little-endian IEEE-754 binary32 regardless of host byte order.
_LITTLE_ENDIAN_F32 = np.dtype("<f4")


def l2_normalize(rows: npt.NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length; an all-zero row stays zero."""
    matrix = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    unit: Vectors = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def encode_f32_base64(vector: npt.ArrayLike) -> str:
    """Encode one 1-D vector as base64 (RFC 4648 §4, padded) of little-endian float32."""
    array = np.asarray(vector, dtype=_LITTLE_ENDIAN_F32)
    if array.ndim != 1:
        raise ValueError(f"expected a 1-D vector, got shape {array.shape}")
    return base64.b64encode(array.tobytes()).decode("ascii")


def decode_f32_base64(blob: str, dimension: int) -> npt.NDArray[np.float32]:
    """Decode one `f32-base64` vector, rejecting a blob that is not `dimension × 4` bytes."""
    try:
        raw = base64.b64decode(blob, validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid f32-base64 vector: {error}") from None
    # §7.3.1: a receiver MUST reject a blob of any other length (the caller maps it to -32602).
    if len(raw) != dimension * 4:
        raise ValueError(
            f"f32-base64 vector has {len(raw)} bytes, expected {dimension * 4} "
            f"for dimension {dimension}"
        )
    return np.frombuffer(raw, dtype=_LITTLE_ENDIAN_F32).astype(np.float32)
