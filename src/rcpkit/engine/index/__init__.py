"""The query index: what every read of an index ranks with, whichever backend holds the rows.

``query_index`` is :class:`QueryIndex` and the protocols a backend implements
for it (:class:`Source`, :class:`Fallback`, :class:`LearnedSparse`);
``_mirror`` follows a backend's committed rows, ``_postings`` is BM25 over them
with an exact pruning top-k (the formula in ``rcpkit.engine.scoring.bm25``),
``_columns`` the §8 filter columns, ``dense`` the vector matrix with its ANN
graph (``_ann``, ``_usearch``), ``_mirror_cache`` keeps all of it beside the
index. Nothing here imports a backend.
"""

from rcpkit.engine.index.query_index import (
    Fallback,
    Index,
    Keys,
    LearnedSparse,
    QueryIndex,
    Ranked,
    Reader,
    Snapshot,
    SnapshotRead,
    Source,
    SparseQuery,
)

__all__ = [
    "Fallback",
    "Index",
    "Keys",
    "LearnedSparse",
    "QueryIndex",
    "Ranked",
    "Reader",
    "Snapshot",
    "SnapshotRead",
    "Source",
    "SparseQuery",
]
