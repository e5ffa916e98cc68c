"""rcpkit's rows as Solr documents, and back (the fields are the configset's ``schema.xml``).

One Solr document per chunk (``kind:chunk``; its document's title, uri, source,
modality, meta and origin copied in, so a hit needs no join), one per document
(``kind:document``: its full text, what citation offsets index) and the store's
own records (``kind:setting``, ``kind:idempotency``).

A chunk's key is a hash of (tenant, document id, content hash, position): stable
for the same content, so a re-sent upsert writes the same Solr ids (§7.10), and
new for new content, so a changed document's chunks are new rows, as in the
other stores. 62 bits: collisions are negligible at any corpus Solr holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.filters import solr_filter_fields
from rcpkit.engine.scoring.bm25 import BM25, term_counts
from rcpkit.engine.store.base import ChunkRow, DocumentRow, NewChunk

__all__ = [
    "CHUNK_FL",
    "chunk_document",
    "chunk_key",
    "chunk_row",
    "document_id",
    "document_record",
    "document_row",
    "tenant_value",
    "vector_field",
    "weighted_terms",
]

_KEY_BITS = (1 << 62) - 1

# What a fetch reads of a chunk document.
CHUNK_FL = "key,doc_id,idx,start,end,text,page,context,modality,title,uri,source,meta,origin"


def tenant_value(tenant: str | None) -> str:
    """The ``tenant`` field's value: never empty (the default tenant is ``t:``)."""
    return "t:" + (tenant or "")


def vector_field(dimension: int) -> str:
    return f"vector_{dimension}"


def chunk_key(tenant: str, doc_id: str, content_hash: str, index: int) -> int:
    digest = hashlib.blake2b(
        json.dumps([tenant, doc_id, content_hash, index]).encode(), digest_size=8
    ).digest()
    return (int.from_bytes(digest, "big") & _KEY_BITS) or 1


def document_id(tenant: str | None, doc_id: str) -> str:
    return "d" + json.dumps([tenant or "", doc_id], ensure_ascii=False)


def weighted_terms(title_terms: str, body_terms: str, bm25: BM25) -> tuple[str, int]:
    """The ``terms`` field's text (each term once, ``term|f``) and the chunk's length.

    ``f`` is rcpkit's weighted hit count (a title hit counts ``title_weight``), which
    Solr's ``DelimitedTermFrequencyTokenFilter`` makes the term's frequency. Weights
    are multiples of 0.25; fractional ones are scaled by 4 so ``f`` stays an integer.
    """
    counts, length = term_counts(title_terms, body_terms)
    scale = 1 if bm25.title_weight.is_integer() and bm25.body_weight.is_integer() else 4
    parts = []
    for term, (in_title, in_body) in sorted(counts.items()):
        frequency = round(scale * (bm25.title_weight * in_title + bm25.body_weight * in_body))
        parts.append(f"{term}|{frequency}")
    return " ".join(parts), length


def chunk_document(
    tenant: str,
    document: DocumentRow,
    chunk: NewChunk,
    key: int,
    version: int,
    bm25: BM25,
) -> dict[str, Any]:
    terms, length = weighted_terms(chunk.title_terms, chunk.body_terms, bm25)
    vector: npt.NDArray[np.float32] = chunk.vector
    fields: dict[str, Any] = {
        "id": str(key),
        "kind": "chunk",
        "key": key,
        "tenant": tenant_value(tenant),
        "doc_id": document.doc_id,
        "idx": chunk.index,
        "start": chunk.start,
        "end": chunk.end,
        "text": chunk.text,
        "terms": terms,
        "length": length,
        "words": " ".join(sorted(chunk.surface_words())),
        "body_terms": chunk.body_terms,
        "title": document.title,
        "uri": document.uri,
        "source": document.source,
        "modality": document.modality,
        "meta": json.dumps(document.meta, ensure_ascii=False),
        "filter_meta": json.dumps(chunk.filter_meta, ensure_ascii=False),
        "origin": document.origin,
        "added": version,
        vector_field(len(vector)): [float(x) for x in vector],
        **solr_filter_fields(chunk.filter_meta),
    }
    if chunk.page is not None:
        fields["page"] = chunk.page
    if chunk.context is not None:
        fields["context"] = chunk.context
    return {name: value for name, value in fields.items() if value is not None}


def document_record(tenant: str, document: DocumentRow, version: int) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": document_id(tenant, document.doc_id),
        "kind": "document",
        "tenant": tenant_value(tenant),
        "doc_id": document.doc_id,
        "title": document.title,
        "uri": document.uri,
        "source": document.source,
        "modality": document.modality,
        "meta": json.dumps(document.meta, ensure_ascii=False),
        "content_hash": document.content_hash,
        "body": document.text,
        "pages": json.dumps(document.pages) if document.pages else None,
        "origin": document.origin,
        "added": version,
    }
    return {name: value for name, value in fields.items() if value is not None}


def chunk_row(found: Mapping[str, Any]) -> ChunkRow:
    return ChunkRow(
        int(found["key"]),
        found["doc_id"],
        int(found["idx"]),
        int(found["start"]),
        int(found["end"]),
        found.get("text", ""),
        found.get("page"),
        found.get("context"),
        found.get("modality", "text"),
        found.get("title"),
        found.get("uri"),
        found.get("source", ""),
        json.loads(found.get("meta") or "{}"),
        found.get("origin", "index/add"),
    )


def document_row(found: Mapping[str, Any]) -> DocumentRow:
    pages = json.loads(found["pages"]) if found.get("pages") else None
    return DocumentRow(
        found["doc_id"],
        found.get("title"),
        found.get("uri"),
        found.get("source", ""),
        found.get("modality", "text"),
        json.loads(found.get("meta") or "{}"),
        found.get("content_hash", ""),
        found.get("body", ""),
        [tuple(page) for page in pages] if pages else None,
        found.get("origin", "index/add"),
    )
