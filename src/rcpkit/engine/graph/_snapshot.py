"""An immutable in-memory view of one graph version, as arrays, for the query side.

Nodes are ordered by entity key (not by insertion), so everything computed from
a snapshot — communities above all — depends only on the graph's content.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from rcpkit.engine.graph._config import GraphConfig
from rcpkit.engine.graph._types import PHRASE_LABEL
from rcpkit.engine.graph._weights import CooccurrenceArrays, edge_weights
from rcpkit.engine.graph.storage import GraphStorage

__all__ = ["Csr", "Snapshot", "load_snapshot"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Csr:
    """Rows of integer columns with values: row `i` is `columns[indptr[i]:indptr[i+1]]`."""

    indptr: IntArray
    columns: IntArray
    values: FloatArray

    def row(self, i: int) -> tuple[IntArray, FloatArray]:
        start, end = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.columns[start:end], self.values[start:end]

    def gather(self, rows: IntArray, cap: int | None = None) -> tuple[IntArray, IntArray]:
        """Entries of several rows (each cut to its first `cap`): (position in `rows`, index).

        `index` points into `columns`/`values`.
        """
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        if cap is not None:
            lengths = np.minimum(lengths, cap)
        offsets = np.cumsum(lengths) - lengths
        index = np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()))
        return np.repeat(np.arange(len(rows)), lengths), index.astype(np.int64)


def _csr(rows: IntArray, columns: IntArray, values: FloatArray, n_rows: int) -> Csr:
    # Within a row: larger value first, then smaller column, so a prefix is the strongest.
    order = np.lexsort((columns, -values, rows))
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return Csr(indptr, columns[order].astype(np.int64), values[order].astype(np.float64))


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Entities, weighted co-occurrence edges and entity↔chunk mentions of one version."""

    version: int
    keys: tuple[str, ...]
    names: tuple[str, ...]
    labels: tuple[str, ...]
    eids: IntArray
    mention_counts: IntArray
    index_of: dict[str, int]
    edge_src: IntArray  # undirected edges, src < dst (node indices)
    edge_dst: IntArray
    edge_weight: FloatArray
    adjacency: Csr  # both directions, strongest first
    strength: FloatArray  # weighted degree
    chunk_keys: IntArray  # ascending
    chunk_ids: tuple[str, ...]
    entity_chunks: Csr  # node → chunk positions (values: mentions in that chunk)
    chunk_entities: Csr  # chunk position → nodes (values: mentions)
    sentence_mentions: Csr  # node → sentence ids (values unused), see `sentence_of`
    sentence_of: IntArray  # sentence id → (chunk key, sentence index) as rows of 2
    by_last_word: dict[str, tuple[int, ...]]  # last word of multi-word names → nodes

    @property
    def n_nodes(self) -> int:
        return len(self.keys)

    def edge_weight_between(self, a: int, b: int) -> float:
        columns, values = self.adjacency.row(a)
        hit = np.nonzero(columns == b)[0]
        return float(values[hit[0]]) if len(hit) else 0.0

    def chunks_of(self, node: int) -> IntArray:
        """Chunk keys mentioning `node`, the chunks with most mentions first."""
        return self.chunk_keys[self.entity_chunks.row(node)[0]]


def load_snapshot(store: GraphStorage, config: GraphConfig) -> Snapshot:
    """Read the whole graph of the store's current version into arrays."""
    with store.reading():
        return _load(store, config)


def _load(store: GraphStorage, config: GraphConfig) -> Snapshot:
    version = store.version
    entities = sorted(store.read("SELECT key, eid, name, label, mentions FROM entities"))
    keys = tuple(row[0] for row in entities)
    eids = np.array([row[1] for row in entities], dtype=np.int64)
    index_of = {key: index for index, key in enumerate(keys)}
    position = {int(eid): index for index, eid in enumerate(eids)}
    chunks = sorted(store.read("SELECT key, chunk_id FROM chunks"))
    chunk_keys = np.array([row[0] for row in chunks], dtype=np.int64)
    n = len(keys)
    mentions = store.read(
        "SELECT eid, chunk_key, sentence, COUNT(*) FROM mentions GROUP BY eid, chunk_key, sentence"
    )
    entity_chunks, chunk_entities, sentence_mentions, sentence_of = _mention_arrays(
        mentions, position, chunk_keys, n
    )
    df = np.diff(entity_chunks.indptr)
    edges = store.read("SELECT src, dst, sentences, chunks FROM edges")
    src = np.array([position[row[0]] for row in edges], dtype=np.int64)
    dst = np.array([position[row[1]] for row in edges], dtype=np.int64)
    counts = CooccurrenceArrays(
        np.array([row[2] for row in edges], dtype=np.int64),
        np.array([row[3] for row in edges], dtype=np.int64),
        df[src] if len(src) else np.zeros(0, np.int64),
        df[dst] if len(dst) else np.zeros(0, np.int64),
        len(chunk_keys),
    )
    weight = edge_weights(config.weighting, counts, config.chunk_weight)
    keep = weight > 0
    src, dst, weight = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep], weight[keep]
    order = np.lexsort((dst, src))
    src, dst, weight = src[order], dst[order], weight[order]
    both_rows = np.concatenate([src, dst])
    adjacency = _csr(both_rows, np.concatenate([dst, src]), np.concatenate([weight, weight]), n)
    return Snapshot(
        version=version,
        keys=keys,
        names=tuple(row[2] for row in entities),
        labels=tuple(row[3] for row in entities),
        eids=eids,
        mention_counts=np.array([row[4] for row in entities], dtype=np.int64),
        index_of=index_of,
        edge_src=src,
        edge_dst=dst,
        edge_weight=weight,
        adjacency=adjacency,
        strength=np.bincount(both_rows, np.concatenate([weight, weight]), minlength=n).astype(
            np.float64
        ),
        chunk_keys=chunk_keys,
        chunk_ids=tuple(str(row[1]) for row in chunks),
        entity_chunks=entity_chunks,
        chunk_entities=chunk_entities,
        sentence_mentions=sentence_mentions,
        sentence_of=sentence_of,
        by_last_word=_by_last_word(keys, tuple(row[3] for row in entities)),
    )


def _by_last_word(keys: tuple[str, ...], labels: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    # Only named (typed) entities: "Amundsen" names "Roald Amundsen", "aircraft" names nothing.
    found: dict[str, list[int]] = {}
    for node, (key, label) in enumerate(zip(keys, labels, strict=True)):
        head, _, last = key.rpartition(" ")
        if head and label != PHRASE_LABEL:
            found.setdefault(last, []).append(node)
    return {word: tuple(nodes) for word, nodes in found.items()}


def _mention_arrays(
    mentions: list[tuple[int, int, int, int]],
    position: dict[int, int],
    chunk_keys: IntArray,
    n: int,
) -> tuple[Csr, Csr, Csr, IntArray]:
    rows = np.array([position[m[0]] for m in mentions], dtype=np.int64)
    chunk_at = np.searchsorted(chunk_keys, np.array([m[1] for m in mentions], dtype=np.int64))
    sentences = np.array([m[2] for m in mentions], dtype=np.int64)
    counts = np.array([m[3] for m in mentions], dtype=np.float64)
    # (node, chunk) totals: the same pair appears once per sentence in `mentions`.
    pair = rows * max(len(chunk_keys), 1) + chunk_at
    unique, inverse = np.unique(pair, return_inverse=True)
    totals = np.bincount(inverse, counts, minlength=len(unique)).astype(np.float64)
    nodes, chunks = unique // max(len(chunk_keys), 1), unique % max(len(chunk_keys), 1)
    entity_chunks = _csr(nodes, chunks, totals, n)
    chunk_entities = _csr(chunks, nodes, totals, len(chunk_keys))
    sentence_pairs = (
        np.stack([chunk_keys[chunk_at], sentences], axis=1)
        if len(mentions)
        else (np.zeros((0, 2), dtype=np.int64))
    )
    sentence_of, sentence_ids = np.unique(sentence_pairs, axis=0, return_inverse=True)
    sentence_mentions = _csr(rows, sentence_ids.reshape(-1).astype(np.int64), counts, n)
    return entity_chunks, chunk_entities, sentence_mentions, sentence_of.astype(np.int64)
