"""BM25 in SQL over the PostgreSQL store's postings, equal to the query index's ranking.

The formula and its parameters are ``rcpkit.engine.scoring.bm25``'s; this is the
same computation in one statement, for a version the query index does not hold
(below its floor, after a compaction).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["lexical_sql", "named"]


# Named parameters: terms (text[]), tenant, version, limit and the constants; {filter}
# joins the chunks a compiled §8 fragment selects, its parameters renamed (see `named`).
_MATCHED = """
WITH matched AS (
    SELECT p.key, p.term, p.title_tf, p.body_tf, p.length
    FROM postings AS p
    WHERE p.term = ANY(%(terms)s) AND p.tenant = %(tenant)s
      AND p.added <= %(version)s AND (p.removed IS NULL OR p.removed > %(version)s)
),
"""
_OWN = """
latest AS (SELECT version = %(version)s AS is_latest FROM versions),
frequency AS (
    -- The maintained per-tenant frequencies are exact when reading the latest version
    -- (one statement sees one snapshot); a pinned read counts the visible chunks.
    SELECT s.term, s.df::float8 AS n FROM term_stats AS s, latest
    WHERE latest.is_latest AND s.tenant = %(tenant)s AND s.term = ANY(%(terms)s)
    UNION ALL
    SELECT m.term, count(*)::float8 FROM matched AS m, latest
    WHERE NOT latest.is_latest GROUP BY m.term
),
corpus AS (
    SELECT chunks::float8 AS rows, tokens::float8 / greatest(chunks, 1) AS avgdl
    FROM corpus_stats WHERE tenant = %(tenant)s AND version <= %(version)s
    ORDER BY version DESC LIMIT 1
),
"""
# weights (float8[]): each term's query weight, as the query index multiplies it into
# the idf (``_postings``) so the two stores' scores stay equal.
_SCORED = """
scored AS (
    SELECT m.key,
           sum(frequency.idf * m.f * (%(k1)s + 1.0)
               / (m.f + %(k1)s * (1.0 - %(b)s + %(b)s * m.length / corpus.avgdl))) AS score
    FROM (SELECT key, term, length,
                 %(title_weight)s * title_tf + %(body_weight)s * body_tf AS f FROM matched) AS m
    JOIN (SELECT f.term, q.weight * CASE WHEN x.idf <= 0.0 THEN 1e-6 ELSE x.idf END AS idf
          FROM frequency AS f CROSS JOIN corpus
          JOIN unnest(%(terms)s::text[], %(weights)s::float8[]) AS q(term, weight)
            ON q.term = f.term
          CROSS JOIN LATERAL (SELECT ln((corpus.rows - f.n + 0.5) / (f.n + 0.5)) AS idf) AS x
         ) AS frequency ON frequency.term = m.term
    CROSS JOIN corpus
    GROUP BY m.key
)
SELECT w.key, w.score FROM scored AS w {join}
ORDER BY w.score DESC, w.key
LIMIT %(limit)s
"""


def lexical_sql(filter_sql: str | None) -> str:
    """The BM25 statement; ``filter_sql`` is a compiled §8 fragment over ``c.filter_meta``.

    Only a filtered read joins ``chunks`` (for its metadata), after scoring: a
    filter narrows which chunks are ranked, never the statistics (as in FTS5).
    """
    join = f"JOIN chunks AS c ON c.key = w.key WHERE {filter_sql}" if filter_sql else ""
    return (_MATCHED + _OWN + _SCORED).replace("{join}", join)


def named(sql: str, params: Sequence[object], prefix: str) -> tuple[str, dict[str, object]]:
    """A ``%s`` fragment (from ``compile_postgres``) rewritten to ``%(prefix<i>)s``.

    The compiler writes no other ``%`` into its SQL; values stay bound parameters.
    """
    pieces = sql.split("%s")
    if len(pieces) != len(params) + 1:
        raise ValueError("the fragment's placeholders do not match its parameters")
    out = [pieces[0]]
    for i, piece in enumerate(pieces[1:]):
        out.append(f"%({prefix}{i})s{piece}")
    return "".join(out), {f"{prefix}{i}": value for i, value in enumerate(params)}
