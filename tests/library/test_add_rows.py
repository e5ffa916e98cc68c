"""What an add stores is what the analyzers and encoders define, row by row.

Issue 51.5 makes the write path faster by doing each piece of work once (one scan
of a chunk for its index terms and the vocabulary's words, each JSON value
serialised once, rows handed on without a second parse). Each shortcut must store
exactly the bytes the plain definitions give: these tests rebuild every stored
value from those definitions and compare, on prose and code, titles in
``title`` and in ``meta.title``, words past the length cap, text NFKC changes,
documents replaced and deleted.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rcpkit
from rcpkit.engine.filters import normalize_meta
from rcpkit.engine.text.analysis import analyze_code_many, analyze_many, surface_words

# Real prose (this Python's own docs), and the cases an analyzer shortcut gets wrong.
PROSE = [
    part
    for module in (argparse, collections, json, sqlite3, hashlib)
    for part in (module.__doc__ or "").split("\n\n")
    if part.strip()
]
EDGES = [
    "The ﬁrst ＦＵＬＬＷＩＤＴＨ word and STRASSE straße İstanbul",  # NFKC and case folding
    "a " + "x" * 64 + " and " + "y" * 65 + " then z",  # one word at the cap, one past it
    "the and of to is it",  # stopwords only: no terms, but words for the vocabulary
    "snake_case and camelCase and HTTPServer2 in prose",
]
CODE = "def parse_filter(text_value):\n    return HTTPServer(text_value)  # " + "y" * 70


def _documents() -> list[dict[str, Any]]:
    texts = [*PROSE, *EDGES]
    documents: list[dict[str, Any]] = []
    for n, text in enumerate(texts):
        document: dict[str, Any] = {"id": f"d{n}", "text": text}
        if n % 3 == 0:
            document["title"] = texts[(n + 1) % len(texts)][:50]
        if n % 4 == 1:
            document["meta"] = {"title": "Ünïcode ΣΑΣ", "year": 1990 + n, "tags": ["a", f"t{n}"]}
        documents.append(document)
    documents.append({"id": "code", "text": CODE, "modality": "code", "title": "parseFilter"})
    return documents


def _stored(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(folder / "index.sqlite3") as db:
        return {
            "chunks": db.execute(
                "SELECT c.key, c.text, c.filter_meta, d.title, d.meta, d.modality, f.c0, f.c1"
                " FROM chunks c JOIN documents d ON d.doc_key = c.doc_key"
                " JOIN chunks_fts_content f ON f.id = c.key WHERE c.removed IS NULL"
            ).fetchall(),
            "documents": db.execute(
                "SELECT doc_id, title, meta, content_hash FROM documents WHERE removed IS NULL"
            ).fetchall(),
            "vocabulary": db.execute("SELECT word, df FROM vocabulary").fetchall(),
        }


def _check_rows(folder: Path, sent: dict[str, dict[str, Any]], fields: dict[str, Any]) -> None:
    stored = _stored(folder)
    words: Counter[str] = Counter()
    for _, text, filter_meta, title, meta, modality, title_terms, body_terms in stored["chunks"]:
        analyzer = analyze_code_many if modality == "code" else analyze_many
        given = json.loads(meta)
        lexical_title = title or (given.get("title") if isinstance(given.get("title"), str) else "")
        assert title_terms == " ".join(analyzer([lexical_title])[0])
        assert body_terms == " ".join(analyzer([text])[0])
        wanted = normalize_meta({**given, "modality": modality}, fields)
        assert filter_meta == json.dumps(wanted, ensure_ascii=False)
        words.update(surface_words(text))
    assert dict(stored["vocabulary"]) == {word: df for word, df in words.items() if df}
    assert len(stored["documents"]) == len(sent)
    for doc_id, title, meta, content_hash in stored["documents"]:
        document = sent[doc_id]
        assert meta == json.dumps(document.get("meta", {}), ensure_ascii=False)
        payload = [document["text"], document.get("meta", {}), document.get("title")]
        encoded = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        assert content_hash == hashlib.sha256(encoded.encode()).hexdigest()
        assert title == document.get("title")


def test_own_vector_rows_are_what_the_analyzers_and_encoders_define(tmp_path: Path) -> None:
    documents = _documents()
    vectors = np.random.default_rng(3).normal(size=(len(documents), 8))
    folder = tmp_path / "own"
    with rcpkit.open(folder, create=True, vectors=8) as index:
        index.add(documents, vectors=vectors)
        # Replaced by other texts (the vocabulary counts down, then up), and deleted.
        replaced = [{**documents[n], "text": documents[n + 1]["text"]} for n in range(0, 8, 2)]
        index.add(replaced, vectors=vectors[:4])
        index.delete(["d1", "d3"])
        sent = {d["id"]: d for d in documents if d["id"] not in ("d1", "d3")}
        sent.update({d["id"]: d for d in replaced})
        _check_rows(folder, sent, index.stats()["filter_fields"])


@pytest.mark.parametrize("contextual", [True, False])
def test_chunked_rows_are_what_the_analyzers_and_encoders_define(
    tmp_path: Path, contextual: bool
) -> None:
    long = [{**d, "text": "\n\n".join([d["text"], *PROSE[:12]])} for d in _documents()[:6]]
    folder = tmp_path / "chunked"
    with rcpkit.open(folder, create=True, embedder="hashing:16") as index:
        result = index.add([*long, *_documents()[6:]], contextual=contextual)
        assert result.chunks > len(_documents())  # the long documents are several chunks
        _check_rows(
            folder, {d["id"]: d for d in [*long, *_documents()[6:]]}, index.stats()["filter_fields"]
        )
