"""Model-file pinning: a model is loaded only after its bytes are the expected ones (§15.7)."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["ModelIntegrityError", "ModelLoadError", "sha256_file", "verify_sha256"]

_CHUNK = 1 << 20


class ModelLoadError(RuntimeError):
    """A model could not be found or opened."""


class ModelIntegrityError(ModelLoadError):
    """A model file's sha256 is not the pinned one: it is corrupt or was swapped."""


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str | None) -> str:
    """Return the file's sha256, raising ModelIntegrityError if it is not `expected`.

    §15.7: a silent model swap changes the embedding space and corrupts every
    index built with it, so a mismatch refuses to load rather than warns.
    """
    if not path.is_file():
        raise ModelLoadError(f"model file not found: {path}")
    actual = sha256_file(path)
    if expected is not None and actual != expected.strip().lower():
        raise ModelIntegrityError(
            f"{path}: sha256 is {actual}, expected {expected.strip().lower()}; "
            "the file is corrupt or not the pinned model, refusing to load it"
        )
    return actual
