"""Bytes to text: binary sniffing, the UTF-8 policy and newline normalisation.

Policy: every format is strict UTF-8 (a ``utf-8-sig`` BOM is dropped, a UTF-16
file with a BOM is decoded as such). Only ``.txt`` and ``.html``/``.htm`` fall back
to Latin-1 when UTF-8 fails, because those are the formats still commonly written
by legacy tools in a single-byte code page; Latin-1 maps every byte, so the fallback
never fails, and a control-character check keeps binaries out of it. Markdown, code
and JSONL that are not UTF-8 are skipped rather than silently mis-decoded.
"""

from __future__ import annotations

import codecs

from rcpkit.engine.ingest._source import SkipFile

__all__ = ["SNIFF_BYTES", "decode_text", "normalize_newlines"]

SNIFF_BYTES = 8192
_CONTROL_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
# A few stray control bytes occur in real legacy text; more than this is a binary.
_MAX_CONTROL_RATIO = 0.01


def normalize_newlines(text: str) -> str:
    """``\\r\\n`` and lone ``\\r`` become ``\\n`` so boundaries are found one way."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(raw: bytes, *, allow_latin1: bool) -> str:
    """Decoded, newline-normalised text, or `SkipFile` for binaries and bad encodings."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return normalize_newlines(_decode_utf16(raw))
    head = raw[:SNIFF_BYTES]
    if b"\x00" in head:
        raise SkipFile("binary file (NUL bytes in the first 8 KB)")
    try:
        return normalize_newlines(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        if not allow_latin1:
            raise SkipFile(_utf8_failure(head, error)) from None
    if _control_ratio(head) > _MAX_CONTROL_RATIO:
        raise SkipFile("binary file (control bytes in the first 8 KB)")
    return normalize_newlines(raw.decode("latin-1"))


def _decode_utf16(raw: bytes) -> str:
    try:
        text = raw.decode("utf-16")
    except UnicodeDecodeError:
        raise SkipFile("invalid UTF-16 after a UTF-16 byte-order mark") from None
    # FF FE also opens binaries that are not text at all; their "characters" show it.
    head = text[: SNIFF_BYTES // 2]
    controls = sum(1 for char in head if char < " " and char not in "\t\n\r\f")
    if head and controls / len(head) > _MAX_CONTROL_RATIO:
        raise SkipFile("binary file (control characters after a UTF-16 byte-order mark)")
    return text


def _utf8_failure(head: bytes, error: UnicodeDecodeError) -> str:
    # An incremental decoder tolerates a character cut at the 8 KB edge.
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "binary or non-UTF-8 file (undecodable UTF-8 in the first 8 KB)"
    return f"not valid UTF-8 (byte offset {error.start})"


def _control_ratio(head: bytes) -> float:
    if not head:
        return 0.0
    return (len(head) - len(head.translate(None, _CONTROL_BYTES))) / len(head)
