"""(query, passage) pair tokenization into padded batches for cross-encoders."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from rcpkit.engine.models import open_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["PairBatch", "PairTokenizer"]

Ids = npt.NDArray[np.int64]


@dataclass(frozen=True)
class PairBatch:
    """Pairs padded to the batch's longest; `token_type_ids` 0 for the query, 1 for the passage."""

    input_ids: Ids
    attention_mask: Ids
    token_type_ids: Ids


def _pad_id(tokenizer: Tokenizer) -> int:
    padding = tokenizer.padding
    if padding is not None:
        return int(padding["pad_id"])
    pad = tokenizer.token_to_id("[PAD]")
    return 0 if pad is None else int(pad)


class PairTokenizer:
    """A `tokenizers` tokenizer encoding pairs with the file's own pair template.

    The template ([CLS] query [SEP] passage [SEP] for BERT) sets the type ids;
    truncation is `longest_first`, so a long passage is cut before the query
    is. A lock serialises calls: the binding's thread safety is not documented.
    """

    def __init__(self, tokenizer_path: Path, max_tokens: int) -> None:
        if max_tokens < 4:
            raise ValueError("max_tokens must be >= 4: a pair needs room for its special tokens")
        self.max_tokens = max_tokens
        self._tokenizer = open_tokenizer(tokenizer_path)
        self._pad = _pad_id(self._tokenizer)
        # Files often pin fixed-length padding; pad per batch instead, to the batch's longest.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
        self._lock = threading.Lock()

    def encode(self, query: str, passages: Sequence[str]) -> PairBatch:
        """One padded row per passage, each the pair (query, passage), in input order."""
        with self._lock:
            encodings = self._tokenizer.encode_batch([(query, passage) for passage in passages])
        width = max((len(encoding.ids) for encoding in encodings), default=0)
        shape = (len(encodings), width)
        ids = np.full(shape, self._pad, np.int64)
        mask, types = np.zeros(shape, np.int64), np.zeros(shape, np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = encoding.attention_mask
            types[row, :n] = encoding.type_ids
        return PairBatch(ids, mask, types)
