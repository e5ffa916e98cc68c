"""Global and session memory (§7.17), MemoRAG-style, built without a language model.

``memory/build`` condenses a corpus (the live index, or documents given
inline) into a compact memory: its key terms (tf-idf over the corpus
vocabulary), its salient sentences (those carrying the most key-term weight,
near-duplicates removed) and, when the engine has a knowledge graph, its
community titles. ``memory/recall`` matches a query against that memory by
dense similarity and returns clues: surrogate sub-queries (the query joined
with the key terms of a matching salient sentence), graph seed ids for the
entities those sentences mention, and a weight in [0, 1].
"""

from __future__ import annotations

import json
import math
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rcpkit.engine.models import Embedder, decode_f32_base64, encode_f32_base64
from rcpkit.engine.state._files import connect_state
from rcpkit.engine.state.base import MemoryTable
from rcpkit.engine.text.analysis import surface_words
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Clue", "MemoryBank", "SQLiteMemories"]

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n{2,}")
_KEY_TERMS = 40
_SALIENT = 24
_MAX_TEXTS = 5000  # chunks read from the live index for one build


@dataclass(frozen=True, slots=True)
class Clue:
    query: str
    weight: float
    terms: tuple[str, ...]


class SQLiteMemories:
    """Memories persisted in ``memory.sqlite3`` beside the index, scoped by tenant."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._connection = connect_state(path)
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS memories (memory_id TEXT PRIMARY KEY, tenant TEXT,"
            " scope TEXT NOT NULL, session_id TEXT, created REAL NOT NULL, payload TEXT NOT NULL)"
        )

    def save(
        self, memory_id: str, tenant: str | None, scope: str, session_id: str | None, payload: str
    ) -> None:
        with self._lock:
            self._connection.execute(
                "INSERT OR REPLACE INTO memories VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, tenant, scope, session_id, time.time(), payload),
            )

    def load(self, memory_id: str | None, tenant: str | None) -> str | None:
        if memory_id is None:
            row = self._connection.execute(
                "SELECT payload FROM memories WHERE tenant IS ? AND scope = 'global'"
                " ORDER BY created DESC LIMIT 1",
                (tenant,),
            ).fetchone()
        else:
            row = self._connection.execute(
                "SELECT payload FROM memories WHERE memory_id = ? AND tenant IS ?",
                (memory_id, tenant),
            ).fetchone()
        return None if row is None else str(row[0])

    def close(self) -> None:
        self._connection.close()


class MemoryBank:
    """Builds and recalls memories; where they are kept is the state store's ``MemoryTable``."""

    def __init__(self, table: MemoryTable) -> None:
        self._table = table

    def build(
        self,
        texts: Sequence[str],
        df: dict[str, int],
        total: int,
        embedder: Embedder,
        *,
        tenant: str | None,
        scope: str,
        session_id: str | None,
        memory_id: str | None,
    ) -> tuple[str, int]:
        """Build (or rebuild) a memory; returns its id and its size in tokens."""
        if memory_id is not None:
            self._payload(memory_id, tenant)  # must exist for this tenant
        terms = _key_terms(texts, df, total)
        sentences = _salient(texts, terms)
        vectors = embedder.embed(sentences, "document") if sentences else np.zeros((0, 1))
        payload = {
            "terms": list(terms),
            "sentences": sentences,
            "vectors": [encode_f32_base64(row) for row in vectors],
            "dimension": int(vectors.shape[1]) if len(vectors) else 0,
        }
        tokens = sum(embedder.count_tokens([*sentences, " ".join(terms)]))
        memory_id = memory_id or f"mem-{secrets.token_hex(8)}"
        self._table.save(memory_id, tenant, scope, session_id, json.dumps(payload))
        return memory_id, tokens

    def recall(
        self, query: str, memory_id: str | None, tenant: str | None, n: int, embedder: Embedder
    ) -> list[Clue]:
        payload = self._payload(memory_id, tenant)
        sentences: list[str] = payload["sentences"]
        if not sentences:
            return []
        dimension = int(payload["dimension"])
        matrix = np.stack([decode_f32_base64(blob, dimension) for blob in payload["vectors"]])
        scores = matrix @ embedder.embed([query], "query")[0]
        key_terms = set(payload["terms"])
        query_words = surface_words(query)
        clues: list[Clue] = []
        for index in np.argsort(-scores, kind="stable")[: max(n * 2, n)]:
            words = surface_words(sentences[index])
            new_terms = tuple(sorted((words & key_terms) - query_words))[:4]
            text = f"{query} {' '.join(new_terms)}".strip()
            if new_terms and all(clue.query != text for clue in clues):
                weight = float(max(0.0, min(1.0, scores[index])))
                clues.append(Clue(text, round(weight, 6), new_terms))
            if len(clues) == n:
                break
        return clues

    def _payload(self, memory_id: str | None, tenant: str | None) -> dict[str, Any]:
        text = self._table.load(memory_id, tenant)
        if text is None:
            # §12: an unknown memoryId is NotFound (and so is another tenant's).
            raise RCPError(ErrorCode.NOT_FOUND, "no such memory; build one with memory/build")
        payload: dict[str, Any] = json.loads(text)
        return payload

    def close(self) -> None:
        self._table.close()


def _key_terms(texts: Sequence[str], df: dict[str, int], total: int) -> tuple[str, ...]:
    counts: Counter[str] = Counter()
    for text in texts[:_MAX_TEXTS]:
        counts.update(word for word in surface_words(text) if len(word) > 2 and not word.isdigit())
    scored = {
        word: count * math.log(1 + total / (1 + df.get(word, count)))
        for word, count in counts.items()
    }
    ranked = sorted(scored, key=lambda word: (-scored[word], word))
    return tuple(ranked[:_KEY_TERMS])


def _salient(texts: Sequence[str], terms: tuple[str, ...]) -> list[str]:
    weight = {term: _KEY_TERMS - rank for rank, term in enumerate(terms)}
    candidates: list[tuple[float, str]] = []
    for text in texts[:_MAX_TEXTS]:
        for sentence in _SENTENCE.split(text):
            sentence = " ".join(sentence.split())
            if 30 <= len(sentence) <= 400:
                score = sum(weight.get(word, 0) for word in surface_words(sentence))
                candidates.append((score / math.sqrt(len(sentence)), sentence))
    candidates.sort(key=lambda item: (-item[0], item[1]))
    chosen: list[str] = []
    chosen_words: list[set[str]] = []
    for _, sentence in candidates:
        words = surface_words(sentence)
        if all(len(words & other) / max(1, len(words | other)) < 0.6 for other in chosen_words):
            chosen.append(sentence)
            chosen_words.append(words)
        if len(chosen) == _SALIENT:
            break
    return chosen
