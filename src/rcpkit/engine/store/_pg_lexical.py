"""BM25 in SQL over the PostgreSQL store's postings, equal to the embedded store's FTS5 ranking.

The embedded store ranks with ``bm25(chunks_fts, 2.0, 1.0)`` over two columns,
``title`` and ``body`` (analysed terms, tokenised by ``unicode61``). FTS5's bm25
(``fts5_aux.c``), which this reproduces term for term:

* ``k1 = 1.2``, ``b = 0.75``;
* ``idf = ln((N - n + 0.5) / (n + 0.5))``, clamped to ``1e-6`` when ``<= 0``,
  ``N`` the rows, ``n`` the rows holding the term (in any column);
* ``f`` = the weighted hit count: each hit in column ``c`` adds ``weight[c]``
  (a title hit counts 2, a body hit 1);
* ``|D|`` = the row's tokens over all columns, unweighted; ``avgdl`` = all tokens / ``N``;
* ``score = Σ idf · f · (k1 + 1) / (f + k1 · (1 - b + b · |D| / avgdl))``.

FTS5 returns ``-score`` (lower is better); both stores return ``+score``.

One deliberate difference: FTS5's ``N``, ``n`` and token total cover every row
of its table, including other tenants' and retired rows not yet collected. Here
they are the tenant's chunks visible at the version read (§7.7.1, §15.6): a
pinned version keeps its scores, and one tenant's corpus does not move
another's. On a single-tenant corpus with nothing retired the two are equal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = [
    "B",
    "BODY_WEIGHT",
    "K1",
    "TITLE_WEIGHT",
    "lexical_sql",
    "named",
    "query_tokens",
    "term_counts",
    "tokens",
]

K1, B = 1.2, 0.75
TITLE_WEIGHT, BODY_WEIGHT = 2.0, 1.0
# unicode61's token characters are the letters, numbers and private-use characters;
# Python's \w adds the underscore (Pc), which unicode61 treats as a separator.
_TOKEN = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """The tokens FTS5's ``unicode61 remove_diacritics 0`` makes of analysed text."""
    return _TOKEN.findall(text.lower())


def term_counts(title_terms: str, body_terms: str) -> tuple[dict[str, tuple[int, int]], int]:
    """Per term (title tf, body tf), and the chunk's length in tokens (BM25 |D|)."""
    title, body = tokens(title_terms), tokens(body_terms)
    in_title, in_body = Counter(title), Counter(body)
    counts = {term: (in_title[term], in_body[term]) for term in in_title.keys() | in_body.keys()}
    return counts, len(title) + len(body)


def query_tokens(terms: Sequence[str]) -> list[str]:
    """Distinct query tokens (a term FTS5 would read as a phrase counts token by token)."""
    return list(dict.fromkeys(token for term in terms for token in tokens(term)))


# Named parameters: terms (text[]), tenant, version, limit and the constants; {filter}
# joins the chunks a compiled §8 fragment selects, its parameters renamed (see `named`).
_SQL = """
WITH matched AS (
    SELECT p.key, p.term, p.title_tf, p.body_tf, p.length
    FROM postings AS p
    WHERE p.term = ANY(%(terms)s) AND p.tenant = %(tenant)s
      AND p.added <= %(version)s AND (p.removed IS NULL OR p.removed > %(version)s)
),
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
scored AS (
    SELECT m.key,
           sum(frequency.idf * m.f * (%(k1)s + 1.0)
               / (m.f + %(k1)s * (1.0 - %(b)s + %(b)s * m.length / corpus.avgdl))) AS score
    FROM (SELECT key, term, length,
                 %(title_weight)s * title_tf + %(body_weight)s * body_tf AS f FROM matched) AS m
    JOIN (SELECT f.term, CASE WHEN x.idf <= 0.0 THEN 1e-6 ELSE x.idf END AS idf
          FROM frequency AS f CROSS JOIN corpus
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
    return _SQL.replace("{join}", join)


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
