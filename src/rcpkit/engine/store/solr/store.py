"""A SolrCloud collection as rcpkit's store (issue 48): servers that hold no corpus.

``--store solr://HOST:PORT/solr/COLLECTION``. Solr holds every row (the
configset rcpkit ships: ``configset/``), shards and replicates them, and ranks
them (``reads``: lexical, dense and filters are Solr requests); rcpkit embeds,
chunks and analyses as with any store, and runs its pipeline (fusion, feedback,
proximity, collapse, MMR, packing) over what Solr returns.

Writes (``commit``): one batch is one update request (the version counters
first, under Solr's optimistic concurrency, so two writers never take the same
number; then the rows), then one request with the deletions, the idempotency
key (§7.10) and a commit; the batch is acknowledged only after it. Durable
before the commit: each request is in every replica's update log, fsynced,
when Solr answers (a crashed node replays it); the commit is a soft one, which
makes the rows searchable (``Collection.update``). Upserts
are by id: a re-sent batch writes the same documents (§7.10). A batch is
not atomic across shards: a failure before the commit leaves its documents
uncommitted (the next commit shows them; the retry writes the same ids).

Versions: the store numbers commits (a ``kind:setting`` document per counter)
but Solr keeps no older state, so only the latest version is servable: the
floor is the latest version, and the server advertises no snapshots.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from rcpkit.engine.scoring.bm25 import BM25, resolve_bm25
from rcpkit.engine.store.base import (
    ChunkRow,
    CommitResult,
    DocumentRow,
    Idempotency,
    Keys,
    WriteBatch,
)
from rcpkit.engine.store.partial import LeftOut, leave_out, tolerated
from rcpkit.engine.store.solr.collection import Collection, parse_url, terms_filter
from rcpkit.engine.store.solr.copies import copy_ids, shard_of, shard_prefixes
from rcpkit.engine.store.solr.http import SolrHttp
from rcpkit.engine.store.solr.reads import SolrDense, SolrIndex, chunk_filters
from rcpkit.engine.store.solr.rows import (
    CHUNK_FL,
    chunk_document,
    chunk_key,
    chunk_row,
    document_id,
    document_record,
    document_row,
    tenant_value,
)
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["SolrStore", "SolrTenancy", "is_solr_url"]

_VERSION = "version"
_ABSENT = object()  # a copy not there at all (a copy of an absent setting has no value)
_EXACT_MAX = 250_000  # dense: sets up to this size are scored exactly (DensePolicy's)


def is_solr_url(store: str | None) -> bool:
    return bool(store) and str(store).startswith("solr://")


# The store's own records share one routing prefix (SolrCloud's compositeId router), so
# they live on one shard: a dead shard that does not hold them costs a read only its rows.
_RECORDS = "rcpkit!"


def _setting_id(name: str) -> str:
    return f"{_RECORDS}s{name}"


def _tenant_id(tenant: str | None) -> str:
    return f"{_RECORDS}q{json.dumps(tenant or '')}"


def _idempotency_id(key: str) -> str:
    return f"{_RECORDS}i{key}"


class SolrTenancy:
    """§15.6 over Solr: each tenant's commit count; only its latest version is servable."""

    def __init__(self, store: SolrStore) -> None:
        self._store = store

    def latest(self, tenant: str | None) -> int:
        def read() -> int:
            found = self._store.collection.get([_tenant_id(tenant)], "value", route=_RECORDS)
            return int(found[0]["value"]) if found else 0

        return self._store.counter(_tenant_id(tenant), read)

    def names(self) -> list[str]:
        body = {"query": "*:*", "filter": ["kind:document"], "limit": 0,
                "facet": {"t": {"type": "terms", "field": "tenant", "limit": -1}}}  # fmt: skip
        buckets = self._store.collection.select(body).get("facets", {}).get("t", {})
        return sorted(str(b["val"])[2:] for b in buckets.get("buckets", []))

    def floor(self, tenant: str | None) -> int:
        return self.latest(tenant)

    def global_version(self, tenant: str | None, seq: int) -> int | None:
        return self._store.version if seq == self.latest(tenant) else None


class SolrStore:
    """The ``Store`` of one SolrCloud collection."""

    def __init__(self, url: str, bm25: dict[str, float | None] | None = None) -> None:
        bases, name = parse_url(url)
        http = SolrHttp(bases)
        self.url = url
        self.collection = Collection(http, name)
        self._write = threading.Lock()
        self._counters: dict[str, int] = {}  # the last value read of each counter
        self._settings: dict[str, str] = {}  # and of each setting
        self._copied: dict[str, str | None] = {}  # each setting as its copies hold it
        self._prefixes: dict[str, str] = {}  # each shard's routing prefix for copies
        self._records_shard: str | None = None
        try:
            self._learn_nodes(http, name)
            self.bm25: BM25 = resolve_bm25(self.setting_default, bm25, url)
        except RCPError as error:  # at open: a command's one-line error, not a traceback
            raise ValueError(f"{url}: {error.message}") from None
        self._check_bm25()
        self.tenancy = SolrTenancy(self)
        self.index = SolrIndex(self.collection)

    def _learn_nodes(self, http: SolrHttp, name: str) -> None:
        """Every live node becomes a failover target; the collection must exist."""
        status = self.collection.guarded(lambda: http.admin("CLUSTERSTATUS", collection=name))
        live = status.get("cluster", {}).get("live_nodes", [])
        http.learn(["http://" + node.replace("_", "/", 1) for node in live])
        shards = status.get("cluster", {}).get("collections", {}).get(name, {}).get("shards", {})
        self._prefixes = shard_prefixes(shards)
        ranges = {
            shard: str(found["range"]) for shard, found in shards.items() if found.get("range")
        }
        self._records_shard = shard_of(_RECORDS.rstrip("!"), ranges)

    def _check_bm25(self) -> None:
        # The configset fixes k1 and b per field type; an index recorded with others
        # would be ranked with the configset's, silently.
        if (self.bm25.k1, self.bm25.b) != (0.9, 0.6):
            raise ValueError(
                f"the Solr configset ranks with BM25 k1 0.9, b 0.6, not {self.bm25.k1},"
                f" {self.bm25.b}: edit configset/conf/schema.xml and upload it to change them"
            )

    # --- versions ---

    @property
    def version(self) -> int:
        """The last committed version (read from the committed index, as every server sees)."""

        def read() -> int:
            body = {"query": "*:*", "filter": [terms_filter("id", [_setting_id(_VERSION)])],
                    "fields": "value", "limit": 1}  # fmt: skip
            # Strict and routed to the records' shard: a dead shard elsewhere does not
            # fail it, and the records' own shard down is never read as version 0.
            found = self.collection.docs(body, strict=True, _route_=_RECORDS)
            return int(found[0]["value"]) if found else 0

        return self.counter(_setting_id(_VERSION), read)

    def counter(self, name: str, read: Callable[[], int]) -> int:
        """A counter read; in a retrieve whose records' shard is down, the last one read.

        The retrieve then says so (``_meta.degraded``: the records left out) rather
        than fail: its rows are read from the shards that answer.
        """
        try:
            value = read()
        except RCPError as error:
            known = self._counters.get(name)
            if known is None or not _records_down(error):
                raise
            return known
        self._counters[name] = value
        return value

    @property
    def floor(self) -> int:
        return self.version  # Solr keeps no older state

    # --- writes ---

    def commit(self, batch: WriteBatch, idempotency: Idempotency | None = None) -> CommitResult:
        with self._write:
            if idempotency is not None:
                found = self.remembered(idempotency[0])
                if found is not None:
                    # Its batch may have failed after the update, before the commit: the
                    # rows are in the update log; committing makes the answer true.
                    self.collection.update([], commit=True)
                    return CommitResult(self.version, [], [], 0, found)
            current = self._record(_setting_id(_VERSION))
            version = (int(current["value"]) if current else 0) + 1
            tenant = batch.tenant or ""
            live = self._live_keys(tenant, [d.doc_id for d, _ in batch.documents] + batch.delete)
            present = self._present(tenant, batch.delete)
            docs: list[dict[str, Any]] = []
            new_keys: set[int] = set()
            added: list[tuple[int, npt.NDArray[np.float32]]] = []
            for document, chunks in batch.documents:
                docs.append(document_record(tenant, document, version))
                for chunk in chunks:
                    key = chunk_key(tenant, document.doc_id, document.content_hash, chunk.index)
                    new_keys.add(key)
                    added.append((key, chunk.vector))
                    docs.append(chunk_document(tenant, document, chunk, key, version, self.bm25))
            removed = [key for key in live if key not in new_keys]
            if not batch.documents and not removed and not present:
                shown = self.tenancy.latest(tenant)  # nothing to write: no new version
                if idempotency is not None:
                    self._remember(idempotency, shown, commit=True)
                return CommitResult(version - 1, [], [], 0, shown=shown)
            shown = self.tenancy.latest(tenant) + 1
            counters = [
                _counter(_setting_id(_VERSION), version, current),
                _counter(_tenant_id(tenant), shown, self._record(_tenant_id(tenant))),
            ]
            # The counters first: a conflicting writer fails before any row is sent.
            self.collection.update(counters + docs)
            # §7.10: the key is recorded only with the request that commits, after every
            # row was accepted: a retry that finds it finds the batch written too.
            final: dict[str, Any] = {}
            if idempotency is not None:
                final["add"] = {"doc": self._remember(idempotency, shown, commit=False)}
            gone = [str(key) for key in removed] + [document_id(tenant, d) for d in present]
            if gone:
                final["delete"] = gone
            self.collection.update(final or [], commit=True)
        return CommitResult(version, added, removed, len(present), shown=shown)

    def _record(self, record_id: str) -> dict[str, Any] | None:
        found = self.collection.get([record_id], "id,value,_version_", route=_RECORDS)
        return found[0] if found else None

    def _remember(self, idempotency: Idempotency, shown: int, commit: bool) -> dict[str, Any]:
        key, result = idempotency
        record = {
            "id": _idempotency_id(key),
            "kind": "idempotency",
            "value": result(shown) if callable(result) else result,
            "added": int(time.time()),
        }
        if commit:
            self.collection.update([record], commit=True)
        return record

    def _live_keys(self, tenant: str, doc_ids: Sequence[str]) -> list[int]:
        keys: list[int] = []
        for group in _groups(list(dict.fromkeys(doc_ids))):
            filters = [*chunk_filters(tenant), terms_filter("doc_id", group)]
            keys.extend(
                int(doc["key"]) for doc in self.collection.each(filters, "key,id", "id asc")
            )
        return keys

    def _present(self, tenant: str, doc_ids: Sequence[str]) -> list[str]:
        ids = [document_id(tenant, doc_id) for doc_id in dict.fromkeys(doc_ids)]
        return [str(doc["doc_id"]) for doc in self.collection.get(ids, "doc_id")]

    def collect(self, retain: int) -> list[int]:
        return []  # deleted rows are gone at commit: nothing older is kept

    def forget_idempotency(self, retention_seconds: float) -> int:
        cutoff = int(time.time() - retention_seconds)
        query = f"kind:idempotency AND added:[* TO {cutoff}]"
        count = self.collection.count([query])
        if count:
            self.collection.update({"delete": {"query": query}}, commit=True)
        return count

    def purge_tenant(self, tenant: str, schemas: Sequence[str] = ()) -> dict[str, int]:
        # The tenant's counter record stays: its numbers go on from there, so
        # a tenant of that name created again never serves the old ones.
        scope = terms_filter("tenant", [tenant_value(tenant)])
        documents = self.collection.count(["kind:document", scope])
        chunks = self.collection.count(["kind:chunk", scope])
        self.collection.update({"delete": {"query": f"tenant:\"{tenant_value(tenant)}\""}},
                               commit=True)  # fmt: skip
        return {"documents": documents, "chunks": chunks}

    # --- settings and idempotency ---

    def remembered(self, idempotency_key: str) -> str | None:
        found = self.collection.get([_idempotency_id(idempotency_key)], "value", route=_RECORDS)
        return str(found[0]["value"]) if found else None

    def setting(self, name: str) -> str | None:
        """A setting; with its records' shard down, its copy on another shard (``copies``),
        else in a retrieve the last value read.

        (A calibration whose corpus looks smaller with a shard down asks for another
        size class's figures: None then, and it calibrates on what it sees.)
        """
        try:
            # Routed: a dead shard that does not hold the records does not fail it.
            found = self.collection.get([_setting_id(name)], "value", route=_RECORDS)
        except RCPError as error:
            if error.code == ErrorCode.BACKEND_UNAVAILABLE:
                copied = self._from_copies(name)
                if copied is not None:
                    return copied[0]
            if not _records_down(error):
                raise
            return self._settings.get(name)
        value = str(found[0]["value"]) if found else None
        if value is not None:
            self._settings[name] = value
        self._copy(name, value)
        return value

    def set_setting(self, name: str, value: str) -> None:
        # No commit of its own: the update log is fsynced when the request answers,
        # and every setting is read by realtime get, which sees it uncommitted. (A
        # commit here was a second one per index/add: the commit time's.)
        record = {"id": _setting_id(name), "kind": "setting", "value": value}
        self.collection.update([record])
        self._copy(name, value, written=True)  # after the record: a failed one leaves them

    def _copy(self, name: str, value: str | None, written: bool = False) -> None:
        """Each shard's copy of the setting (None: absent), rewritten if it says otherwise
        (``written``: the record was just, so they do)."""
        if (name in self._copied and self._copied[name] == value) or not self._prefixes:
            return
        ids = list(copy_ids(name, self._prefixes).values())
        try:
            held = {} if written else {d["id"]: d.get("value") for d in self.collection.get(ids)}
            if any(held.get(copy_id, _ABSENT) != value for copy_id in ids):
                self.collection.update([_copy_record(copy_id, value) for copy_id in ids])
        except RCPError:
            return  # a shard down: the setting itself was read; copied on a later read
        self._copied[name] = value

    def _from_copies(self, name: str) -> tuple[str | None] | None:
        """The setting as a live shard's copy holds it; None when no copy answers."""
        for shard, copy_id in copy_ids(name, self._prefixes).items():
            if shard == self._records_shard:
                continue  # down with the records
            try:
                route = self._prefixes[shard] + "!"
                found = self.collection.get([copy_id], "id,value", route=route)  # id: never {}
            except RCPError:
                continue
            if found:
                value = found[0].get("value")
                return (None if value is None else str(value),)
        return None

    def setting_default(self, name: str, value: str) -> str:
        existing = self.setting(name)
        if existing is not None:
            return existing
        # `_version_: -1`: only if absent, so servers starting together agree on one.
        record = {"id": _setting_id(name), "kind": "setting", "value": value, "_version_": -1}
        try:
            self.collection.guarded(
                lambda: self.collection.http.post_json(
                    f"/{self.collection.name}/update", [record], commit="true"
                )
            )
        except RCPError as error:
            if _records_down(error):
                return value  # this read's own figures: none can be agreed on now
            if "version conflict" not in error.message.lower():
                raise
        return self.setting(name) or value

    # --- reads ---

    def open_dense(self, dimension: int, policy: Any) -> SolrDense:
        # As the embedded index: exact below the size where ANN pays (and perfect there).
        exact_max = getattr(policy, "ann_min_size", _EXACT_MAX)
        return SolrDense(self.collection, dimension, exact_max)

    def fetch(self, keys: Sequence[int]) -> dict[int, ChunkRow]:
        rows: dict[int, ChunkRow] = {}
        for group in _groups(list(dict.fromkeys(keys))):
            body = {"query": "*:*", "filter": ["kind:chunk", terms_filter("key", group)],
                    "fields": CHUNK_FL, "limit": len(group)}  # fmt: skip
            rows.update((int(doc["key"]), chunk_row(doc)) for doc in self.collection.docs(body))
        return rows

    def documents_of(self, keys: Sequence[int]) -> dict[int, DocumentRow]:
        """Each chunk's document: the live one its chunk was cut from (Solr keeps no
        replaced document, and a replaced document's chunks are gone with it)."""
        owners: dict[int, str] = {}  # chunk key -> its document record's id
        for group in _groups(list(dict.fromkeys(keys))):
            body = {"query": "*:*", "filter": ["kind:chunk", terms_filter("key", group)],
                    "fields": "key,tenant,doc_id", "limit": len(group)}  # fmt: skip
            for doc in self.collection.docs(body):
                owners[int(doc["key"])] = document_id(str(doc["tenant"])[2:], doc["doc_id"])
        found = {
            record["id"]: document_row(record)
            for record in self.collection.get(sorted(set(owners.values())))
        }
        return {key: found[owner] for key, owner in owners.items() if owner in found}

    def body_terms(self, keys: Sequence[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for group in _groups(list(dict.fromkeys(keys))):
            body = {"query": "*:*", "filter": ["kind:chunk", terms_filter("key", group)],
                    "fields": "key,body_terms", "limit": len(group)}  # fmt: skip
            found.update(
                (int(doc["key"]), str(doc.get("body_terms", "")))
                for doc in self.collection.docs(body)
            )
        return found

    def vectors(self) -> tuple[Keys, npt.NDArray[np.float32], Keys, Keys, list[str]]:
        raise RuntimeError("the Solr backend keeps its vectors in Solr: no local matrix")

    def filter_values(self, keys: Sequence[int], name: str) -> dict[int, Any]:
        values: dict[int, Any] = {}
        for group in _groups(list(dict.fromkeys(keys))):
            body = {"query": "*:*", "filter": ["kind:chunk", terms_filter("key", group)],
                    "fields": "key,filter_meta", "limit": len(group)}  # fmt: skip
            for doc in self.collection.docs(body):
                values[int(doc["key"])] = json.loads(doc.get("filter_meta") or "{}").get(name)
        return values

    def _document_record(self, doc_id: str, tenant: str | None, fields: str) -> dict[str, Any]:
        body = {"query": "*:*", "filter": [terms_filter("id", [document_id(tenant, doc_id)])],
                "fields": fields, "limit": 1}  # fmt: skip
        found = self.collection.docs(body)
        return found[0] if found else {}

    def content_hash(self, doc_id: str, tenant: str | None = None) -> str | None:
        found = self._document_record(doc_id, tenant, "content_hash")
        return str(found["content_hash"]) if found else None

    def live_documents(self, tenant: str | None = None) -> list[tuple[str, str | None, str]]:
        filters = ["kind:document", terms_filter("tenant", [tenant_value(tenant)])]
        found = self.collection.each(filters, "doc_id,uri,origin", "id asc")
        rows = [(str(d["doc_id"]), d.get("uri"), str(d.get("origin", "index/add"))) for d in found]
        return sorted(rows)

    def document(self, doc_id: str, tenant: str | None = None) -> DocumentRow | None:
        found = self._document_record(doc_id, tenant, "*")
        return document_row(found) if found else None

    def document_chunks(self, doc_id: str, tenant: str | None = None) -> list[ChunkRow]:
        filters = [*chunk_filters(tenant), terms_filter("doc_id", [doc_id])]
        found = self.collection.each(filters, CHUNK_FL + ",id", "id asc")
        return sorted((chunk_row(doc) for doc in found), key=lambda row: row.index)

    def describe(self) -> dict[str, Any]:
        live = [name for name in self.tenancy.names() if self.count(name or None)[0]]
        return {"tenants": len(live), "size_bytes": None}

    def vocabulary(self, tenant: str | None = None) -> list[tuple[str, int]]:
        body = {"query": "*:*", "filter": chunk_filters(tenant), "limit": 0,
                "facet": {"w": {"type": "terms", "field": "words", "limit": -1,
                                "mincount": 1}}}  # fmt: skip
        buckets = self.collection.select(body).get("facets", {}).get("w", {}).get("buckets", [])
        return [(str(bucket["val"]), int(bucket["count"])) for bucket in buckets]

    def live_texts(self, limit: int, tenant: str | None = None) -> list[str]:
        body = {"query": "*:*", "filter": chunk_filters(tenant), "fields": "text",
                "limit": max(0, limit), "sort": "key desc"}  # fmt: skip
        return [str(doc.get("text", "")) for doc in self.collection.docs(body)]

    def document_frequency(self, word: str, tenant: str | None = None) -> int:
        return self.collection.count(chunk_filters(tenant), f"words:{json.dumps(word)}")

    def count(self, tenant: str | None = None) -> tuple[int, int]:
        scope = terms_filter("tenant", [tenant_value(tenant)])
        return (
            self.collection.count(["kind:document", scope]),
            self.collection.count(["kind:chunk", scope]),
        )

    def ingested(self, tenant: str | None = None) -> int:
        scope = terms_filter("tenant", [tenant_value(tenant)])
        return self.collection.count(["kind:document", scope, 'origin:"ingest"'])

    def close(self) -> None:
        """Nothing held open: each request is its own HTTP exchange."""


def _records_down(error: RCPError) -> bool:
    """In a retrieve, whether ``error`` is the records' shard down; if so it is named.

    The retrieve then goes on without the records (``_meta.degraded``: ``records``)
    rather than fail: its rows are read from the shards that answer (§16.2).
    """
    if not tolerated() or error.code != ErrorCode.BACKEND_UNAVAILABLE:
        return False
    leave_out(LeftOut("records", int(error.code), error.message))
    return True


def _copy_record(copy_id: str, value: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": copy_id, "kind": "copy"}
    if value is not None:
        record["value"] = value
    return record


def _counter(record_id: str, value: int, current: dict[str, Any] | None) -> dict[str, Any]:
    """A counter's new value, accepted by Solr only over the version read (else 409)."""
    return {
        "id": record_id,
        "kind": "setting",
        "value": str(value),
        "_version_": int(current["_version_"]) if current else -1,
    }


def _groups(items: list[Any], size: int = 500) -> list[list[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
