"""WordPiece tokenization into padded, length-sorted batches for transformer encoders."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models._integrity import ModelLoadError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["ModelTokenizer", "TokenBatch", "read_max_tokens"]

Ids = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TokenBatch:
    """A padded batch; `rows` are the texts' positions in the caller's list."""

    rows: npt.NDArray[np.intp]
    input_ids: Ids
    attention_mask: Ids
    token_type_ids: Ids
    #: True where a position is a real, non-special token (no [CLS]/[SEP]/padding).
    content_mask: npt.NDArray[np.bool_]


def open_tokenizer(path: Path) -> Tokenizer:
    try:
        from tokenizers import Tokenizer
    except ImportError as error:
        raise ModelLoadError("tokenization needs `pip install tokenizers`") from error
    if not path.is_file():
        raise ModelLoadError(f"tokenizer file not found: {path}")
    return Tokenizer.from_file(str(path))


def read_max_tokens(tokenizer_path: Path, default: int = 512) -> int:
    """The input length a model directory declares, preferring the pooling config.

    sentence-transformers' `max_seq_length` (256 for all-MiniLM-L6-v2) wins
    over tokenizer.json's own truncation (128 there, its training length).
    """
    config = tokenizer_path.parent / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text())["max_seq_length"])
    truncation = json.loads(tokenizer_path.read_text()).get("truncation")
    return int(truncation["max_length"]) if truncation else default


class ModelTokenizer:
    """A `tokenizers` tokenizer set to truncate at `max_tokens`, padding done here.

    The tokenizer is configured once, here, and then only read; a lock still
    serialises calls because the binding's thread safety is not documented.
    """

    def __init__(self, tokenizer_path: Path, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._model_input = open_tokenizer(tokenizer_path)
        # tokenizer.json files often pin fixed padding (128 for MiniLM); pad per batch instead.
        self._model_input.no_padding()
        self._model_input.enable_truncation(max_length=max_tokens)
        self._counting = open_tokenizer(tokenizer_path)
        self._counting.no_padding()
        self._counting.no_truncation()
        self._lock = threading.Lock()

    @property
    def vocabulary_size(self) -> int:
        """Number of token ids, added tokens included."""
        return int(self._model_input.get_vocab_size(with_added_tokens=True))

    def id_to_token(self, token_id: int) -> str | None:
        """The vocabulary entry for an id."""
        return self._model_input.id_to_token(token_id)

    def count(self, texts: Sequence[str]) -> list[int]:
        """Word pieces in each whole text, without truncation or special tokens."""
        with self._lock:
            encodings = self._counting.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]

    def batches(self, texts: Sequence[str], batch_size: int) -> Iterator[TokenBatch]:
        """Length-sorted padded batches covering every text exactly once."""
        with self._lock:
            encodings = self._model_input.encode_batch(list(texts))
        # Sorting by length keeps texts of similar length together, so less padding is computed.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            shape = (len(rows), width)
            ids, mask, types = (np.zeros(shape, np.int64) for _ in range(3))
            content = np.zeros(shape, np.bool_)
            for r, i in enumerate(rows):
                encoding = encodings[i]
                n = len(encoding.ids)
                ids[r, :n] = encoding.ids
                mask[r, :n] = encoding.attention_mask
                types[r, :n] = encoding.type_ids
                content[r, :n] = np.logical_not(encoding.special_tokens_mask)
            yield TokenBatch(np.array(rows, np.intp), ids, mask, types, content & (mask > 0))
