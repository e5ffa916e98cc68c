"""BM25 as every rcpkit index ranks: its parameters, and the tokens it counts.

One BM25 over two columns, ``title`` and ``body`` (analysed terms, tokenised as
FTS5's ``unicode61``), FTS5's bm25 formula (``fts5_aux.c``) with its
parameters made settings (`BM25`):
* ``k1`` (0.9), ``b`` (0.6): FTS5's are 1.2 and 0.75; these, with the title
  weight 3, were chosen on the development halves of two collections (issue 16,
  BENCHMARKS.md "Retrieval quality", third round);
* ``idf = ln((N - n + 0.5) / (n + 0.5))``, clamped to ``1e-6`` when ``<= 0``,
  ``N`` the rows, ``n`` the rows holding the term (in any column);
* ``f`` = the weighted hit count: each hit in column ``c`` adds ``weight[c]``
  (a title hit counts ``title_weight``, 3 by default, a body hit ``body_weight``, 1);
* ``|D|`` = the row's tokens over all columns, unweighted; ``avgdl`` = all tokens / ``N``;
* ``w`` = the query term's weight, ``1 + ln(c)`` for a term the analysed query
  holds ``c`` times (``query_weights``): a long request's repeated words are its
  subject (issue 50: scoring each distinct term once lost 0.07 nDCG@10 to
  bm25s on a collection of long queries), but Lucene's and bm25s's full count
  (``w = c``; FTS5 sums a repeated phrase) lowered a one-sentence query whose
  repeat is a filler word ("this command ... command"): the default's nDCG@10 on
  man-short dev 0.792 → 0.781, against 0.789 with ``1 + ln(c)``, which keeps
  man-verbose's gain (docs/quality.md); and an identifier's ``n`` parts
  (``PostgreSQL`` -> ``postgr``, ``sql``, beside its whole form) weigh ``1 / n``
  each, one word's evidence: counted in full, a man page naming "Postgres" and
  "SQL" outranked the one asked for (the sparse arm 0.991× → 0.995× bm25s on
  man-long's dev half);
* ``score = Σ w · idf · f · (k1 + 1) / (f + k1 · (1 - b + b · |D| / avgdl))``.

With k1 1.2, b 0.75 and weights 2, 1 this is exactly ``-bm25(chunks_fts, 2.0, 1.0)``
(FTS5 returns ``-score``, lower is better; both stores return ``+score``); FTS5
itself ranks no query (its k1 and b are compiled in), it only keeps the analysed
columns.

One deliberate difference: FTS5's ``N``, ``n`` and token total cover every row
of its table, including other tenants' and retired rows not yet collected. Here
they are the tenant's chunks visible at the version read (§7.7.1, §15.6): a
pinned version keeps its scores, and one tenant's corpus does not move
another's. On a single-tenant corpus with nothing retired the two are equal.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

from rcpkit.engine.text.analysis import Part

__all__ = [
    "BM25",
    "DEFAULT_BM25",
    "FTS5_BM25",
    "bm25_of",
    "query_tokens",
    "query_weights",
    "resolve_bm25",
    "term_counts",
    "tokens",
]

WEIGHT_STEP = 0.25  # column weights are multiples of this (see BM25)
SETTING = "bm25"  # the store setting recording an index's parameters


@dataclass(frozen=True, slots=True)
class BM25:
    """An index's BM25 parameters, one value for every store path.

    Column weights are positive multiples of ``WEIGHT_STEP`` so the weighted count ``f``
    is exact in the mirror's float32 postings and in PostgreSQL's float8: the two
    stores' scores stay equal to the last bit of the formula, not merely close.
    """

    k1: float = 0.9
    b: float = 0.6
    title_weight: float = 3.0
    body_weight: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.k1 <= 10.0:
            raise ValueError(f"BM25 k1 = {self.k1} — expected 0 < k1 ≤ 10")
        if not 0.0 <= self.b <= 1.0:
            raise ValueError(f"BM25 b = {self.b} — expected 0 ≤ b ≤ 1")
        for name in ("title_weight", "body_weight"):
            weight = getattr(self, name)
            # Not 0: a term then still counts in n (FTS5's df is over all columns) but
            # adds nothing, and the stores would have to keep postings of weight 0.
            if not 0.0 < weight <= 16.0 or (weight / WEIGHT_STEP) % 1:
                raise ValueError(
                    f"BM25 {name} = {weight} — expected a multiple of {WEIGHT_STEP} in (0, 16]"
                )

    def encode(self) -> str:
        """The store setting's value (JSON)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def decode(cls, value: str) -> BM25:
        return cls(**{key: float(v) for key, v in json.loads(value).items()})

    def describe(self) -> str:
        return (
            f"k1 {self.k1:g}, b {self.b:g}, title weight {self.title_weight:g}, "
            f"body weight {self.body_weight:g}"
        )


DEFAULT_BM25 = BM25()
FTS5_BM25 = BM25(k1=1.2, b=0.75, title_weight=2.0)  # bm25(chunks_fts, 2.0, 1.0)


def bm25_of(recorded: str | None, requested: Mapping[str, float | None], where: object) -> BM25:
    """The parameters an index ranks with: those it recorded, else the requested ones.

    ``requested`` names the configured values (None: not configured). An index
    records its parameters when it is created, so that every server on it and
    every pinned read rank alike (§7.7.1); a configuration naming others is an
    error rather than a silent re-ranking of an existing index.
    """
    named = {key: float(value) for key, value in requested.items() if value is not None}
    if recorded is None:
        return BM25(**named)
    have = BM25.decode(recorded)
    differs = {key: value for key, value in named.items() if getattr(have, key) != value}
    if differs:
        asked = ", ".join(f"{key} = {value:g}" for key, value in sorted(differs.items()))
        raise ValueError(
            f"index {where} ranks with BM25 {have.describe()} (fixed when it was created), "
            f"not {asked}; index into a new folder (or database) to change them"
        )
    return have


def resolve_bm25(
    setting_default: Callable[[str, str], str],
    requested: Mapping[str, float | None] | None,
    where: object,
    *,
    legacy: bool = False,
) -> BM25:
    """A store's parameters at open: recorded by a new index (set-if-absent), checked after.

    ``setting_default`` is the store's race-free set-if-absent (a read-only store
    records nothing and gets the value back), so servers starting together on a new
    shared store agree on one set of parameters. ``legacy``: the store already holds
    versions but no record (written before the parameters were settings); it ranked
    with FTS5's constants, so those fill in whatever is not configured.
    """
    fill = FTS5_BM25 if legacy else DEFAULT_BM25
    named = {key: value for key, value in (requested or {}).items() if value is not None}
    wanted = BM25(**{**asdict(fill), **{key: float(value) for key, value in named.items()}})
    return bm25_of(setting_default(SETTING, wanted.encode()), named, where)


# unicode61's token characters are the letters, numbers and private-use characters;
# Python's \w adds the underscore (Pc), which unicode61 treats as a separator.
_TOKEN = re.compile(r"[^\W_]+")
_PLAIN = re.compile(r"[a-z0-9 ]*")  # lower-case ASCII words between spaces: split() is exact


def tokens(text: str) -> list[str]:
    """The tokens FTS5's ``unicode61 remove_diacritics 0`` makes of analysed text."""
    if _PLAIN.fullmatch(text) is not None:
        return text.split()  # the common case; the check is ~1 µs for 500 characters
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


def query_weights(terms: Sequence[str]) -> dict[str, float]:
    """Each distinct query token (first-seen order) and its weight ``w = (1 + ln c) · s``,
    ``c`` how often it occurs and ``s`` the mean share of those occurrences: 1 for a
    word, ``1 / n`` for one of an identifier's ``n`` parts (`Part`). The one weight
    every lexical path multiplies in."""
    shares: dict[str, list[float]] = {}
    for term in terms:
        share = 1.0 / term.of if isinstance(term, Part) else 1.0
        for token in tokens(term):
            shares.setdefault(token, []).append(share)
    return {token: (1.0 + math.log(len(s))) * math.fsum(s) / len(s) for token, s in shares.items()}
