"""A minimal reader of the safetensors format, so model weights need no torch.

Format: an 8-byte little-endian header length, a JSON header mapping each
tensor name to `dtype`, `shape` and `data_offsets`, then the raw bytes.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._integrity import ModelLoadError

__all__ = ["read_safetensors"]

_DTYPES: dict[str, np.dtype[np.generic]] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
}
# Integer buffers such as BERT's `position_ids` are not weights: skipped.
_SKIPPED = frozenset({"BOOL", "U8", "I8", "I16", "U16", "I32", "U32", "I64", "U64"})
_MAX_HEADER = 100 << 20


def _as_float32(raw: npt.NDArray[np.generic], dtype: str) -> npt.NDArray[np.float32]:
    if dtype == "BF16":
        # bfloat16 is the top half of a float32.
        return (raw.astype(np.uint32) << 16).view(np.float32)
    return raw.astype(np.float32)


def read_safetensors(path: Path) -> dict[str, npt.NDArray[np.float32]]:
    """Every floating-point tensor in the file, as float32 arrays; integer buffers are skipped."""
    data = path.read_bytes()
    if len(data) < 8:
        raise ModelLoadError(f"{path}: too short to be a safetensors file")
    (header_length,) = struct.unpack("<Q", data[:8])
    if header_length > min(_MAX_HEADER, len(data) - 8):
        raise ModelLoadError(f"{path}: safetensors header length {header_length} is invalid")
    header = json.loads(data[8 : 8 + header_length])
    body = memoryview(data)[8 + header_length :]
    tensors: dict[str, npt.NDArray[np.float32]] = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] in _SKIPPED:
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ModelLoadError(f"{path}: tensor {name} has unsupported dtype {entry['dtype']}")
        start, end = entry["data_offsets"]
        shape = tuple(entry["shape"])
        if not 0 <= start <= end <= len(body) or end - start != dtype.itemsize * int(
            np.prod(shape, dtype=np.int64)
        ):
            raise ModelLoadError(f"{path}: tensor {name} has inconsistent offsets")
        raw = np.frombuffer(body[start:end], dtype=dtype).reshape(shape)
        tensors[name] = _as_float32(raw, entry["dtype"])
    return tensors
