"""Image Content blocks in requests, read as their OCR text (§4.8, issue 19).

An ``image`` block (inline base64 ``data`` with its ``mimeType``) is accepted
where the engine advertises the ``image`` modality, which it does only when the
``ocr`` extra is importable (`modalities`). What the engine uses is the text
OCR reads from the image: a retrieve/rerank query or an embed input becomes
that text, said so in ``usage.notes``; an index/add document's images become
its text, one page per image (`image_document_parts`). No visual embedding is
made.

Errors, per §4.8 and §12:

- a ``mimeType`` outside PNG/JPEG/WebP/TIFF is ``-32005`` (``data.option =
  "mimeType"``): a block type/mimeType the server does not take;
- base64 that does not decode, or bytes that are not an image of the declared
  type, are ``-32602`` naming ``<block>.data`` (malformed whatever is advertised);
- an image over `MAX_IMAGE_PIXELS`, or a request whose images together decode
  to more than `MAX_REQUEST_PIXELS`, is ``-32013`` (§12.2: retrying it unchanged
  cannot succeed);
- an image that does not fit the process's pixel budget (`SERVER_PIXEL_BUDGET`,
  shared by every request's OCR) within a short wait is ``-32011`` with
  ``retryAfterMs`` (§12.2: the server sheds load, a retry can succeed);
- an image query or embed input in which OCR finds no legible text is
  ``-32602``, as an empty text query already is: it names nothing to search for;
- a ``uri`` is fetched only under a prefix the operator listed (``[engine]
  fetch_uris``; none by default): any other is ``-32602`` before the handler
  (`rcpkit.server.blocks`), and one that cannot be fetched is ``-32602`` too (§4.8);
  the fetch itself is `rcpkit.handlers.fetch`.

OCR runs on the worker thread that runs the handler (sync handlers run in the
runtime's worker pool, off the event loop), with a cancellation checkpoint
before and after each image, so a cancelled or timed-out request stops there as
text work stops at its checkpoints (§7.14, §13.1).
"""

from __future__ import annotations

import base64
import binascii
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from rcpkit.engine.ingest.images import (
    IMAGE_MIME_TYPES,
    MAX_IMAGE_PIXELS,
    MAX_REQUEST_PIXELS,
    OCR_MISSING,
    ImageRejected,
    ImageText,
    image_ocr_available,
    read_image,
)
from rcpkit.engine.request import EngineRequest
from rcpkit.handlers.fetch import MAX_FETCH_BYTES, fetch
from rcpkit.protocol.base import Modality
from rcpkit.protocol.content import Content, QueryInput, TextInput
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = [
    "MAX_FETCH_BYTES",
    "OCR_MISSING",
    "fetch",
    "ImagePage",
    "image_document_parts",
    "modalities",
    "ocr_text",
    "query_text",
]

_ENGINE = "RapidOCR PP-OCRv4"
_BUDGET_WAIT = 2.0  # seconds an image waits for room in the server's pixel budget
_RETRY_AFTER_MS = 1000
# Decoded pixels each request's images have used so far (MAX_REQUEST_PIXELS);
# the entry goes with the request.
_decoded: weakref.WeakKeyDictionary[EngineRequest, int] = weakref.WeakKeyDictionary()


def modalities() -> list[Modality]:
    """What the engine's Content-taking capabilities advertise (§4.8)."""
    return ["text", "code", "image"] if image_ocr_available() else ["text", "code"]


def query_text(
    value: QueryInput, path: str, ctx: EngineRequest, fetchable: Sequence[str] = ()
) -> str:
    """A query's text: its text blocks, and its image blocks read by OCR (noted).

    -32602 when the query had an image and still has no text to search for.
    """
    if isinstance(value, str):
        return value
    blocks = [(path, value)] if isinstance(value, Content) else _indexed(value, path)
    parts = [_block_text(block, where, ctx, fetchable) for where, block in blocks]
    text = "\n".join(part for part in parts if part)
    if not text.strip() and any(block.type == "image" for _, block in blocks):
        raise RCPError.invalid_params(
            path, f"`{path}`: OCR found no legible text in the image, so there is nothing to match"
        )
    return text


def ocr_text(
    value: TextInput,
    path: str,
    ctx: EngineRequest,
    *,
    required: bool,
    fetchable: Sequence[str] = (),
) -> str:
    """One input's text (a passage, an embed input); ``required``: no text is -32602."""
    if isinstance(value, str):
        return value
    text = _block_text(value, path, ctx, fetchable)
    if required and value.type == "image" and not text.strip():
        raise RCPError.invalid_params(path, f"`{path}`: OCR found no legible text in the image")
    return text


@dataclass(frozen=True, slots=True)
class ImagePage:
    """One image of a document: where its text sits in the document and what OCR saw."""

    block: int
    mime_type: str
    read: ImageText


def image_document_parts(
    content: Sequence[Content], path: str, ctx: EngineRequest, fetchable: Sequence[str] = ()
) -> list[str | ImagePage]:
    """Each block of an index/add document's ``content``: its text, or its image read."""
    parts: list[str | ImagePage] = []
    for index, block in enumerate(content):
        where = f"{path}[{index}]"
        if block.type == "text":
            parts.append(block.text or "")
        else:
            assert block.mime_type is not None  # Content validation
            read = _read(block, where, ctx, fetchable)
            parts.append(ImagePage(index, block.mime_type, read))
    return parts


def _indexed(blocks: Sequence[Content], path: str) -> list[tuple[str, Content]]:
    return [(f"{path}[{index}]", block) for index, block in enumerate(blocks)]


def _block_text(block: Content, path: str, ctx: EngineRequest, fetchable: Sequence[str]) -> str:
    if block.type == "text":
        return block.text or ""
    found = _read(block, path, ctx, fetchable)
    text = found.text
    ctx.notes.append(
        f"`{path}` is a {block.mime_type} image ({found.width}x{found.height}); its OCR text "
        f"was used ({_ENGINE}: {len(found.lines)} lines, {len(text)} characters)"
    )
    return text


def _read(block: Content, path: str, ctx: EngineRequest, fetchable: Sequence[str]) -> ImageText:
    if block.type != "image":  # the modality gate admits only text and image blocks
        raise RCPError.option_unsupported("modality", f"`{path}` is a {block.type} block")
    assert block.mime_type is not None  # Content validation: non-text blocks carry one
    if block.mime_type.split(";", 1)[0].strip().lower() not in IMAGE_MIME_TYPES:
        raise RCPError.option_unsupported(
            "mimeType",
            f"`{path}.mimeType` {block.mime_type!r} is not read "
            f"(supported: {', '.join(IMAGE_MIME_TYPES)})",
        )
    if block.uri is not None:
        raw = fetch(block.uri, path, ctx, fetchable)
    else:
        assert block.data is not None  # Content validation: data xor uri
        try:
            raw = base64.b64decode(block.data, validate=True)
        except (binascii.Error, ValueError):
            message = f"`{path}.data` is not valid base64"
            raise RCPError.invalid_params(f"{path}.data", message) from None
    ctx.check_cancelled()
    spent = _decoded.get(ctx, 0)
    remaining = ctx.remaining()
    # Half the time left at most: a refusal that can be retried, before the deadline.
    wait = _BUDGET_WAIT if remaining is None else min(_BUDGET_WAIT, remaining / 2)
    try:
        found = read_image(raw, block.mime_type, allowance=MAX_REQUEST_PIXELS - spent, wait=wait)
    except ImageRejected as rejected:
        if rejected.kind == "mimeType":
            raise RCPError.option_unsupported("mimeType", f"`{path}`: {rejected.reason}") from None
        if rejected.kind == "size":
            raise RCPError(
                ErrorCode.PAYLOAD_TOO_LARGE,
                f"`{path}`: {rejected.reason} (MAX_IMAGE_PIXELS {MAX_IMAGE_PIXELS})",
                field=path,
            ) from None
        if rejected.kind == "busy":
            raise RCPError(
                ErrorCode.RATE_LIMITED,
                f"`{path}`: {rejected.reason}; retry later",
                field=path,
                retry_after_ms=_RETRY_AFTER_MS,
            ) from None
        where = f"{path}.data" if block.uri is None else f"{path}.uri"
        raise RCPError.invalid_params(where, f"`{path}`: {rejected.reason}") from None
    _decoded[ctx] = spent + found.width * found.height
    ctx.check_cancelled()
    return found
