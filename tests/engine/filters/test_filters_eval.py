"""§8 semantics: normalize_meta, the Python evaluator and the SQLite compiler agree."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from rcpkit.engine.filters import (
    OPERATORS,
    Clause,
    FieldType,
    Filter,
    Not,
    compile_postgres,
    compile_sqlite,
    matches,
    normalize_meta,
    parse_filter,
)
from rcpkit.engine.index._columns import FilterColumns

INJECTION = 'a"); DROP TABLE docs;--'
FIELDS: dict[str, FieldType] = {
    "lang": "keyword",
    "tags": "keyword",
    "body": "text",
    "year": "int",
    "score": "float",
    "draft": "bool",
    "published": "date",
    "where": "geo",
}
JUNE_12_2017_MS = 1497225600000
# The fields these documents hold arrays in: `contains` is membership on them (§8).
ARRAY_FIELDS = frozenset({"tags", "year", "published"})

Select = Callable[[Filter, Sequence[Mapping[str, object]]], set[int]]


def open_table(
    rows: Sequence[Mapping[str, object]], column: str = "filter_meta"
) -> closing[sqlite3.Connection]:
    """An in-memory table with one JSON text column; rows alternate the two JSON
    spellings of non-ASCII text (escaped and raw), which SQLite must read alike."""
    connection = sqlite3.connect(":memory:")
    connection.execute(f"CREATE TABLE docs (id INTEGER PRIMARY KEY, {column} TEXT)")
    connection.executemany(
        f"INSERT INTO docs (id, {column}) VALUES (?, ?)",
        [
            (i, json.dumps(row, ensure_ascii=i % 2 == 0, allow_nan=False))
            for i, row in enumerate(rows)
        ],
    )
    return closing(connection)


def select_sqlite(
    connection: sqlite3.Connection, tree: Filter, column: str = "filter_meta"
) -> set[int]:
    where, params = compile_sqlite(tree, column)
    return {row[0] for row in connection.execute(f"SELECT id FROM docs WHERE {where}", params)}


def select_python(tree: Filter, rows: Sequence[Mapping[str, object]]) -> set[int]:
    return {i for i, row in enumerate(rows) if matches(tree, row)}


def select_with_sqlite(tree: Filter, rows: Sequence[Mapping[str, object]]) -> set[int]:
    with open_table(rows) as connection:
        return select_sqlite(connection, tree)


_postgres: list[Any] = []  # one connection for the module's postgres selections


def postgres_connection() -> Any:
    if not _postgres:
        import pg_support
        import psycopg

        _postgres.append(psycopg.connect(pg_support.fresh_database(), autocommit=True))
    return _postgres[0]


def select_postgres(connection: Any, tree: Filter) -> set[int]:
    where, params = compile_postgres(tree, "filter_meta")
    return {row[0] for row in connection.execute(f"SELECT id FROM docs WHERE {where}", params)}


def load_postgres(connection: Any, rows: Sequence[Mapping[str, object]]) -> None:
    connection.execute("DROP TABLE IF EXISTS docs")
    connection.execute("CREATE TABLE docs (id int PRIMARY KEY, filter_meta jsonb NOT NULL)")
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO docs (id, filter_meta) VALUES (%s, %s::jsonb)",
            [(i, json.dumps(row, allow_nan=False)) for i, row in enumerate(rows)],
        )


def select_with_postgres(tree: Filter, rows: Sequence[Mapping[str, object]]) -> set[int]:
    connection = postgres_connection()
    load_postgres(connection, rows)
    return select_postgres(connection, tree)


def select_with_columns(tree: Filter, rows: Sequence[Mapping[str, object]]) -> set[int]:
    # The embedded store's in-memory filter columns (no SQL at query time).
    columns = FilterColumns()
    columns.extend(list(rows))
    return set(np.flatnonzero(columns.mask(tree, len(rows))).tolist())


BACKENDS: dict[str, Select] = {
    "columns": select_with_columns,
    "python": select_python,
    "sqlite": select_with_sqlite,
    "postgres": select_with_postgres,
}


@pytest.fixture(scope="module", autouse=True)
def _close_postgres() -> Iterator[None]:
    yield
    while _postgres:
        connection = _postgres.pop()
        url = f"postgresql://postgres@127.0.0.1:{connection.info.port}/{connection.info.dbname}"
        connection.close()
        import pg_support

        pg_support.drop_database(url)


@pytest.fixture(params=sorted(BACKENDS))
def select(request: pytest.FixtureRequest) -> Select:
    backend: Select = BACKENDS[request.param]
    return backend


def parse(raw: object, fields: Mapping[str, FieldType] = FIELDS) -> Filter:
    return parse_filter(raw, fields, OPERATORS, array_fields=ARRAY_FIELDS)


def clause(field: str, op: str, value: object) -> dict[str, object]:
    return {"field": field, "op": op, "value": value}


def test_the_stdlib_sqlite_has_the_json1_functions() -> None:
    with closing(sqlite3.connect(":memory:")) as connection:
        row = connection.execute("""SELECT json_extract('{"a":1}', '$.a')""").fetchone()
        each = connection.execute("""SELECT key, type FROM json_each('{"a":true}')""").fetchall()
    assert row == (1,)
    assert each == [("a", "true")]


# --- normalize_meta -------------------------------------------------------------------


def test_normalize_meta_keeps_only_declared_fields() -> None:
    stored = normalize_meta({"lang": "en", "secret": "x", "Lang": "de"}, FIELDS)
    assert stored == {"lang": "en"}


def test_normalize_meta_converts_dates_to_epoch_milliseconds_element_wise() -> None:
    assert normalize_meta({"published": "2017-06-12T02:00:00+02:00"}, FIELDS) == {
        "published": JUNE_12_2017_MS
    }
    stored = normalize_meta({"published": ["2017-06-12", 0, "someday", 1.5]}, FIELDS)
    assert stored == {"published": [JUNE_12_2017_MS, 0]}


def test_normalize_meta_drops_values_of_the_wrong_type() -> None:
    meta = {"lang": 5, "year": "2020", "score": True, "draft": 1, "body": None, "tags": {"a": 1}}
    assert normalize_meta(meta, FIELDS) == {}


def test_normalize_meta_drops_wrong_typed_elements_but_keeps_the_array() -> None:
    stored = normalize_meta({"tags": ["a", 5, None, ["b"], "c"], "year": [True, "x"]}, FIELDS)
    assert stored == {"tags": ["a", "c"], "year": []}


def test_normalize_meta_reads_numbers_by_field_type() -> None:
    stored = normalize_meta({"score": 2, "year": 2020.0}, FIELDS)
    assert stored == {"score": 2.0, "year": 2020}
    assert type(stored["score"]) is float
    assert type(stored["year"]) is int


def test_normalize_meta_never_stores_geo_fields() -> None:
    assert normalize_meta({"where": [1.0, 2.0]}, FIELDS) == {}


def test_normalize_meta_output_is_strict_json() -> None:
    meta = {"score": [float("nan"), float("inf"), 1e300], "lang": "a\x00b", "body": "\ud800"}
    stored = normalize_meta(meta, FIELDS)
    assert stored == {"score": [1e300]}
    json.dumps(stored, allow_nan=False)


# --- shared semantics, on every backend -----------------------------------------------

DOCS: list[dict[str, object]] = [
    normalize_meta(meta, FIELDS)
    for meta in [
        {
            "lang": "en",
            "tags": ["news", "blog"],
            "body": "Hello World",
            "year": 2020,
            "score": 0.5,
            "draft": False,
            "published": "2017-06-12T00:00:00Z",
        },
        {"lang": "de", "tags": [], "year": 2024, "score": 1, "draft": True},
        {"lang": "EN", "tags": "news", "body": "hello", "year": "2020", "draft": 1},
        {},
        {"year": [2019, 2021], "tags": ["a", 5], "published": [0, JUNE_12_2017_MS]},
    ]
]

SEMANTICS: list[tuple[str, dict[str, object], set[int]]] = [
    ("eq is case-sensitive", clause("lang", "eq", "en"), {0}),
    ("ne matches documents lacking the field", clause("lang", "ne", "en"), {1, 2, 3, 4}),
    ("nin matches documents lacking the field", clause("lang", "nin", ["en", "de"]), {2, 3, 4}),
    ("exists true is presence", clause("year", "exists", True), {0, 1, 4}),
    ("a wrong-typed value is absent", clause("year", "exists", False), {2, 3}),
    ("an empty array is present", clause("tags", "exists", True), {0, 1, 2, 4}),
    ("eq on an array is element membership", clause("tags", "eq", "news"), {0, 2}),
    ("contains on an array keyword is membership", clause("tags", "contains", "news"), {0, 2}),
    ("contains on an array int is membership", clause("year", "contains", 2021), {4}),
    ("contains on an array int reads a scalar too", clause("year", "contains", 2024), {1}),
    ("contains on an array date", clause("published", "contains", JUNE_12_2017_MS), {0, 4}),
    ("contains is no substring on keywords", clause("tags", "contains", "new"), set()),
    ("ne on an array means no element equal", clause("tags", "ne", "news"), {1, 3, 4}),
    ("contains on text is a substring", clause("body", "contains", "World"), {0}),
    ("substring is case-sensitive", clause("body", "contains", "hello"), {2}),
    ("the empty substring is in any text", clause("body", "contains", ""), {0, 2}),
    ("gt on an array is any element", clause("year", "gt", 2020), {1, 4}),
    ("lt on an array is any element", clause("year", "lt", 2020), {4}),
    ("ranges compare numerically", clause("year", "gte", 2020), {0, 1, 4}),
    ("bool eq true", clause("draft", "eq", True), {1}),
    ("bool eq false", clause("draft", "eq", False), {0}),
    ("bool in both", clause("draft", "in", [True, False]), {0, 1}),
    ("int value on a float field", clause("score", "gte", 1), {1}),
    ("float in", clause("score", "in", [0.5, 3]), {0}),
    ("dates compare in either encoding", clause("published", "eq", "2017-06-12"), {0, 4}),
    ("date ranges", clause("published", "lt", "2017-06-12T00:00:00.001Z"), {0, 4}),
    ("date before", clause("published", "lt", 1), {4}),
    ("not is the complement", {"not": clause("lang", "eq", "en")}, {1, 2, 3, 4}),
    (
        "and of clauses",
        {"and": [clause("lang", "in", ["en", "de"]), clause("year", "lte", 2020)]},
        {0},
    ),
    ("or of clauses", {"or": [clause("lang", "eq", "de"), clause("tags", "eq", "a")]}, {1, 4}),
]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(raw, expected) for _, raw, expected in SEMANTICS],
    ids=[name for name, _, _ in SEMANTICS],
)
def test_every_backend_gives_the_documented_semantics(
    select: Select, raw: dict[str, object], expected: set[int]
) -> None:
    assert select(parse(raw), DOCS) == expected


def test_a_json_boolean_never_matches_a_number_nor_the_reverse(select: Select) -> None:
    # Stored as-is (not through normalize_meta): SQLite reads true as 1.
    rows: list[dict[str, object]] = [
        {"draft": 1, "year": True},
        {"draft": [0, 1], "year": [False, True]},
        {"draft": True, "year": 1},
    ]
    assert select(parse(clause("draft", "eq", True)), rows) == {2}
    assert select(parse(clause("draft", "in", [False, True])), rows) == {2}
    assert select(parse(clause("year", "eq", 1)), rows) == {2}
    assert select(parse(clause("year", "gte", 0)), rows) == {2}
    assert select(parse(clause("year", "in", [0, 1])), rows) == {2}


def test_a_number_never_matches_a_string_nor_the_reverse(select: Select) -> None:
    rows: list[dict[str, object]] = [{"lang": 1, "year": "1"}, {"lang": "1", "year": 1}]
    assert select(parse(clause("lang", "eq", "1")), rows) == {1}
    assert select(parse(clause("year", "eq", 1)), rows) == {1}
    assert select(parse(clause("year", "lt", 5)), rows) == {1}


def test_a_missing_or_null_column_matches_only_negative_clauses() -> None:
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, filter_meta TEXT)")
        connection.execute("INSERT INTO docs VALUES (1, NULL), (2, '{}')")
        assert select_sqlite(connection, parse(clause("lang", "ne", "en"))) == {1, 2}
        assert select_sqlite(connection, parse(clause("lang", "eq", "en"))) == set()
        assert select_sqlite(connection, parse(clause("lang", "exists", False))) == {1, 2}


# --- §15.4: nothing the client sends becomes SQL text ---------------------------------

HOSTILE_NAMES = [
    INJECTION,
    'a"b',
    "a.b",
    "x[0]",
    '$."q"',
    "back\\slash",
    "it's",
    "é",
    "😀",
    "",
    " ",
    "-- comment",
    "?",
]


def test_hostile_field_names_are_looked_up_exactly_and_never_reach_the_sql(
    select: Select,
) -> None:
    fields: dict[str, FieldType] = dict.fromkeys(HOSTILE_NAMES, "keyword")
    rows = [normalize_meta({name: f"v{i}"}, fields) for i, name in enumerate(HOSTILE_NAMES)]
    for i, name in enumerate(HOSTILE_NAMES):
        tree = parse(clause(name, "eq", f"v{i}"), fields)
        assert select(tree, rows) == {i}, name
        assert select(parse(clause(name, "exists", True), fields), rows) == {i}, name


def test_compiled_sql_carries_field_names_and_values_only_as_parameters() -> None:
    fields: dict[str, FieldType] = {INJECTION: "keyword", "body": "text"}
    value = "'); DROP TABLE docs; --"
    raw = {
        "or": [
            clause(INJECTION, "in", [value, "x"]),
            clause("body", "contains", value),
            clause(INJECTION, "exists", True),
        ]
    }
    sql, params = compile_sqlite(parse(raw, fields))
    assert "DROP" not in sql
    assert "body" not in sql
    assert INJECTION in params
    assert value in params
    with open_table([{INJECTION: value}, {"body": value}, {}]) as connection:
        assert select_sqlite(connection, parse(raw, fields)) == {0, 1}
        assert connection.execute("SELECT count(*) FROM docs").fetchone() == (3,)


@pytest.mark.parametrize(
    "column",
    ["filter_meta; DROP TABLE docs", "1meta", "", "meta-json", "métadonnées", "key", "VALUE"],
)
def test_the_column_must_be_a_plain_identifier_clear_of_json_each_names(column: str) -> None:
    with pytest.raises(ValueError, match="column"):
        compile_sqlite(parse(clause("lang", "eq", "en")), column)


def test_another_column_name_can_be_compiled_against() -> None:
    with open_table([{"lang": "en"}, {"lang": "de"}], column="meta_json") as connection:
        assert select_sqlite(connection, parse(clause("lang", "eq", "de")), "meta_json") == {1}


# --- the largest filters parse_filter allows still compile and run --------------------
# SQLite 3.40 has a 100-entry parser stack and a 1000-high expression bound; these
# are the shapes that stress each, at the limits parse_filter enforces.


def alternating(depth: int, leaf: Callable[[int], dict[str, object]]) -> dict[str, object]:
    """and/or alternating ``depth`` nodes deep, the nested child written last."""
    node = leaf(depth)
    for level in range(depth - 1, 0, -1):
        node = {("and" if level % 2 else "or"): [leaf(level), node]}
    return node


def complete(
    depth: int, leaf: Callable[[int], dict[str, object]], *, nots: bool = False
) -> dict[str, object]:
    """A complete binary tree: the shape that makes every operand equally deep."""
    if depth == 1:
        return leaf(depth)
    children = [complete(depth - 1, leaf, nots=nots) for _ in range(2)]
    node: dict[str, object] = {("and" if depth % 2 else "or"): children}
    return {"not": node} if nots and depth % 3 == 0 else node


def year_in(level: int) -> dict[str, object]:
    return clause("year", "nin" if level % 2 else "in", [level, level + 1, 5000])


def tags_eq(level: int) -> dict[str, object]:
    return clause("tags", "ne" if level % 3 else "eq", f"t{level}")


LIMIT_ROWS: list[dict[str, object]] = [
    {"year": 5, "tags": ["t1", "t2"]},
    {"year": 5000, "tags": "t3"},
    {"year": [1, 2, 3], "tags": []},
    {"year": 31},
    {},
]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(alternating(32, year_in), id="alternating-and-or-32-deep"),
        pytest.param(alternating(32, tags_eq), id="alternating-eq-ne-32-deep"),
        pytest.param(complete(9, year_in), id="complete-binary-511-nodes"),
        pytest.param({"or": [year_in(n) for n in range(511)]}, id="or-511-wide"),
        pytest.param({"and": [tags_eq(n) for n in range(511)]}, id="and-511-wide"),
        pytest.param(
            {"and": [alternating(31, year_in), complete(8, tags_eq, nots=True)]},
            id="deep-beside-bushy",
        ),
    ],
)
def test_the_deepest_and_largest_filters_allowed_compile_and_run_on_sqlite(
    raw: dict[str, object],
) -> None:
    tree = parse(raw)
    where, params = compile_sqlite(tree)
    # Margin for the caller's own query around the fragment: 24 more levels of nesting.
    nested = "(" * 24 + where + ")" * 24
    with open_table(LIMIT_ROWS) as connection:
        found = {
            row[0] for row in connection.execute(f"SELECT id FROM docs WHERE {nested}", params)
        }
        assert found == select_python(tree, LIMIT_ROWS)


def test_thirty_one_nested_nots_compile_to_one_clause() -> None:
    deep: dict[str, object] = clause("year", "in", list(range(1024)))
    for _ in range(31):
        deep = {"not": deep}
    sql, _ = compile_sqlite(parse(deep))
    assert "NOT" in sql
    assert sql.count("EXISTS") == 1
    rows: list[dict[str, object]] = [{"year": 5}, {"year": 5000}]
    assert select_python(parse(deep), rows) == {1}
    with open_table(rows) as connection:
        assert select_sqlite(connection, parse(deep)) == {1}


# --- differential: SQLite == Python on random corpora and filters ---------------------

DIFF_FIELDS: dict[str, FieldType] = {
    **FIELDS,
    INJECTION: "keyword",
    "é.ü[0]": "int",
    'quo"te\\d': "date",
}
# Every field may hold arrays in the random corpus; these are declared so (§8 `contains`).
DIFF_ARRAYS = frozenset({"tags", INJECTION, "year", "score", "draft", 'quo"te\\d'})
KEYWORDS = ["en", "de", "EN", "", "news", "blog", "日本語", "😀", "a'b", 'q"x', "a\\b", "ä", "ß"]
WORDS = ["Hello", "hello", "World", "über", "😀", "x y", "%", "_", "naïve", "Z"]
INTS = [-3, -1, 0, 1, 2, 3, 2020, 2024, 2**53 - 1, -(2**53 - 1)]
FLOATS = [-1.5, 0.0, -0.0, 0.1, 0.30000000000000004, 0.5, 1.0, 2.5, 1e300, 5e-324, -1e-300]
DATES_MS = [0, -1, JUNE_12_2017_MS, JUNE_12_2017_MS + 1, 1_700_000_000_000, -86_400_000]


def rfc3339(ms: int, rng: random.Random) -> str:
    """``ms`` spelled as RFC 3339 in a random offset, computed independently of the parser."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    local = moment.astimezone(timezone(timedelta(minutes=rng.choice([0, 60, -330, 840]))))
    text = local.isoformat(timespec="milliseconds")
    return text.replace("+00:00", rng.choice(["Z", "+00:00"]))


def date_of(rng: random.Random) -> object:
    ms = rng.choice(DATES_MS)
    return rfc3339(ms, rng) if rng.random() < 0.5 else ms


def scalar_of(field_type: FieldType, rng: random.Random) -> object:
    generators: dict[FieldType, Callable[[], object]] = {
        "keyword": lambda: rng.choice(KEYWORDS),
        "text": lambda: " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))),
        "int": lambda: rng.choice(INTS),
        "float": lambda: rng.choice([*FLOATS, *INTS[:6]]),
        "bool": lambda: rng.choice([True, False]),
        "date": lambda: date_of(rng),
        "geo": lambda: [rng.random(), rng.random()],
    }
    return generators[field_type]()


def wrong_value(rng: random.Random) -> object:
    other: FieldType = rng.choice(["keyword", "int", "float", "bool", "date"])
    return rng.choice([scalar_of(other, rng), None, {"nested": 1}, [[1]]])


def random_meta(rng: random.Random) -> dict[str, object]:
    meta: dict[str, object] = {"unadvertised": rng.choice(KEYWORDS)}
    for name, field_type in DIFF_FIELDS.items():
        roll = rng.random()
        if roll < 0.25:
            continue
        if roll < 0.35:
            meta[name] = wrong_value(rng)
        elif roll < 0.65:
            meta[name] = [
                wrong_value(rng) if rng.random() < 0.1 else scalar_of(field_type, rng)
                for _ in range(rng.randint(0, 4))
            ]
        else:
            meta[name] = scalar_of(field_type, rng)
    return meta


def allowed_ops(name: str, field_type: FieldType) -> list[str]:
    ops = ["eq", "ne", "in", "nin", "exists"]
    if field_type in ("int", "float", "date"):
        ops += ["gt", "gte", "lt", "lte"]
    if field_type == "text" or name in DIFF_ARRAYS:
        ops += ["contains"]
    return ops


def random_clause(rng: random.Random) -> dict[str, object]:
    name, field_type = rng.choice([item for item in DIFF_FIELDS.items() if item[1] != "geo"])
    op = rng.choice(allowed_ops(name, field_type))
    if op == "exists":
        return clause(name, op, rng.random() < 0.5)
    if op in ("in", "nin"):
        return clause(name, op, [scalar_of(field_type, rng) for _ in range(rng.randint(1, 4))])
    if op == "contains" and field_type == "text":
        word = rng.choice(WORDS)
        start = rng.randint(0, len(word))
        return clause(name, op, word[start : rng.randint(start, len(word))])
    return clause(name, op, scalar_of(field_type, rng))


def random_filter(rng: random.Random, depth: int = 0) -> dict[str, object]:
    roll = rng.random()
    if depth >= 4 or roll < 0.55:
        return random_clause(rng)
    if roll < 0.7:
        return {"not": random_filter(rng, depth + 1)}
    children = [random_filter(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    return {rng.choice(["and", "or"]): children}


@pytest.fixture(scope="module")
def corpus() -> Iterator[tuple[list[dict[str, object]], sqlite3.Connection]]:
    """300 normalised documents, then 60 stored raw: the backends must also agree
    on wrong-typed values (true vs 1, date strings, objects) a careless writer left."""
    rng = random.Random(20170612)
    rows = [normalize_meta(random_meta(rng), DIFF_FIELDS) for _ in range(300)]
    rows += [random_meta(rng) for _ in range(60)]
    with open_table(rows) as connection:
        yield rows, connection


def test_sqlite_selects_exactly_what_matches_selects_for_random_filters(
    corpus: tuple[list[dict[str, object]], sqlite3.Connection],
) -> None:
    rows, connection = corpus
    rng = random.Random(8)
    selective = 0
    for n in range(500):
        raw = random_filter(rng)
        tree = parse_filter(raw, DIFF_FIELDS, OPERATORS, array_fields=DIFF_ARRAYS)
        expected = select_python(tree, rows)
        assert select_sqlite(connection, tree) == expected, (n, raw)
        selective += 0 < len(expected) < len(rows)
    assert selective >= 300  # the corpus and filters really discriminate


def test_filter_columns_select_exactly_what_matches_selects_for_random_filters(
    corpus: tuple[list[dict[str, object]], sqlite3.Connection],
) -> None:
    rows, _ = corpus
    columns = FilterColumns()
    columns.extend(rows[:200])  # appended in two steps, as the store's mirror does
    columns.extend(rows[200:])
    rng = random.Random(9)
    for n in range(500):
        raw = random_filter(rng)
        tree = parse_filter(raw, DIFF_FIELDS, OPERATORS, array_fields=DIFF_ARRAYS)
        found = set(np.flatnonzero(columns.mask(tree, len(rows))).tolist())
        assert found == select_python(tree, rows), (n, raw)


def test_postgres_selects_exactly_what_matches_selects_for_random_filters(
    corpus: tuple[list[dict[str, object]], sqlite3.Connection],
) -> None:
    rows = corpus[0]
    connection = postgres_connection()
    load_postgres(connection, rows)
    rng = random.Random(8)
    for n in range(500):
        raw = random_filter(rng)
        tree = parse_filter(raw, DIFF_FIELDS, OPERATORS, array_fields=DIFF_ARRAYS)
        assert select_postgres(connection, tree) == select_python(tree, rows), (n, raw)


def test_the_deepest_and_largest_filters_allowed_compile_and_run_on_postgres() -> None:
    connection = postgres_connection()
    load_postgres(connection, LIMIT_ROWS)
    for raw in (
        alternating(32, year_in),
        complete(9, year_in),
        {"or": [year_in(n) for n in range(511)]},
        {"and": [alternating(31, year_in), complete(8, tags_eq, nots=True)]},
    ):
        tree = parse(raw)
        assert select_postgres(connection, tree) == select_python(tree, LIMIT_ROWS)


def test_postgres_sql_carries_field_names_and_values_only_as_parameters() -> None:
    fields: dict[str, FieldType] = {INJECTION: "keyword", "body": "text"}
    value = "'); DROP TABLE docs; --"
    raw = {"or": [clause(INJECTION, "in", [value]), clause("body", "contains", value)]}
    sql, params = compile_postgres(parse(raw, fields))
    assert "DROP" not in sql
    assert INJECTION not in sql
    bound = [json.loads(p) if isinstance(p, str) and p.startswith("{") else p for p in params]
    assert {INJECTION: [value]} in bound  # a short `in` is a bound jsonb containment
    assert value in params  # the substring test binds it as text


def test_the_random_corpus_exercises_arrays_missing_fields_and_every_type(
    corpus: tuple[list[dict[str, object]], sqlite3.Connection],
) -> None:
    rows = corpus[0][:300]
    values = [value for row in rows for value in row.values()]
    assert any(isinstance(value, list) and not value for value in values)
    for name, field_type in DIFF_FIELDS.items():
        present = sum(name in row for row in rows)
        assert (0 < present < len(rows)) if field_type != "geo" else present == 0, name
    kinds = {type(value) for value in values} | {
        type(item) for value in values if isinstance(value, list) for item in value
    }
    assert {str, int, float, bool, list} <= kinds


def test_random_filters_cover_every_operator() -> None:
    rng = random.Random(8)
    seen: set[str] = set()

    def collect(tree: Filter) -> None:
        if isinstance(tree, Clause):
            seen.add(tree.op)
        elif isinstance(tree, Not):
            collect(tree.child)
        else:
            for child in tree.children:
                collect(child)

    for _ in range(500):
        collect(parse_filter(random_filter(rng), DIFF_FIELDS, OPERATORS, array_fields=DIFF_ARRAYS))
    assert seen == set(OPERATORS)
