"""§8 validation: what parse_filter accepts, how it normalises, and which error it raises."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import rcpkit.engine.filters as filters
from rcpkit.engine.filters import (
    OPERATORS,
    And,
    Clause,
    FieldType,
    Filter,
    Not,
    Or,
    parse_filter,
)
from rcpkit.protocol.errors import ErrorCode, RCPError

FIELDS: dict[str, FieldType] = {
    "lang": "keyword",
    "body": "text",
    "year": "int",
    "score": "float",
    "draft": "bool",
    "published": "date",
    "where": "geo",
}
FIELD_OF_TYPE = {field_type: name for name, field_type in FIELDS.items()}

# The §8 table, written out independently of the implementation's registry.
ALLOWED: dict[FieldType, set[str]] = {
    "keyword": {"eq", "ne", "in", "nin", "exists"},
    "text": {"eq", "ne", "in", "nin", "contains", "exists"},
    "int": {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
    "float": {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
    "date": {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"},
    "bool": {"eq", "ne", "in", "nin", "exists"},
    "geo": set(),
}
SAMPLE: dict[FieldType, object] = {
    "keyword": "en",
    "text": "hello",
    "int": 2020,
    "float": 0.5,
    "bool": True,
    "date": "2017-06-12T00:00:00Z",
    "geo": [1.0, 2.0],
}
JUNE_12_2017_MS = 1497225600000


def parse(raw: object, operators: tuple[str, ...] | list[str] = OPERATORS) -> Filter:
    return parse_filter(raw, FIELDS, operators)


def rejection(raw: object, operators: tuple[str, ...] | list[str] = OPERATORS) -> RCPError:
    with pytest.raises(RCPError) as caught:
        parse(raw, operators)
    return caught.value


def invalid_field(raw: object) -> str | None:
    error = rejection(raw)
    assert error.code == ErrorCode.INVALID_PARAMS, error
    assert error.option is None
    return error.field


def clause(field: str, op: str, value: object) -> dict[str, object]:
    return {"field": field, "op": op, "value": value}


def value_for(op: str, field_type: FieldType) -> object:
    sample = SAMPLE[field_type]
    if op in ("in", "nin"):
        return [sample]
    if op == "exists":
        return True
    return sample


# --- the public surface -------------------------------------------------------------


def test_the_package_exports_exactly_the_intended_names() -> None:
    assert set(filters.__all__) == {
        "FieldType",
        "Filter",
        "Clause",
        "And",
        "Or",
        "Not",
        "parse_filter",
        "normalize_meta",
        "operators_for",
        "matches",
        "compile_sqlite",
        "compile_postgres",
        "compile_solr",
        "solr_filter_fields",
        "OPERATORS",
    }
    for name in filters.__all__:
        assert hasattr(filters, name), name


def test_the_operator_vocabulary_is_the_ten_of_section_8() -> None:
    assert set(OPERATORS) == {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains"} | {
        "exists"
    }


# --- the operator × field type matrix -------------------------------------------------


@pytest.mark.parametrize("field_type", [t for t in ALLOWED if t != "geo"])
def test_contains_is_membership_on_a_field_declared_array_valued(field_type: FieldType) -> None:
    # §8: `contains` applies to `text` (substring) and array-valued fields (membership).
    name = FIELD_OF_TYPE[field_type]
    tree = parse_filter(
        clause(name, "contains", SAMPLE[field_type]), FIELDS, OPERATORS, array_fields=[name]
    )
    assert isinstance(tree, Clause)
    assert tree.op == "contains"
    assert filters.operators_for(field_type, True) == [
        op for op in OPERATORS if op in ALLOWED[field_type] | {"contains"}
    ]


def test_contains_on_a_scalar_keyword_is_an_operator_not_allowed_for_that_field() -> None:
    error = rejection(clause("lang", "contains", "en"))
    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.field == "filter.op"
    assert "`lang`" in error.message
    assert "contains" not in error.message.split("takes", 1)[1]


def test_no_operator_applies_to_a_geo_field_even_declared_array_valued() -> None:
    with pytest.raises(RCPError) as caught:
        parse_filter(clause("where", "contains", 1.0), FIELDS, OPERATORS, array_fields=["where"])
    assert caught.value.field == "filter.op"


@pytest.mark.parametrize("field_type", list(ALLOWED))
def test_operators_for_lists_the_section_8_table(field_type: FieldType) -> None:
    assert filters.operators_for(field_type) == [
        op for op in OPERATORS if op in ALLOWED[field_type]
    ]


@pytest.mark.parametrize(
    ("field_type", "op"), list(itertools.product(ALLOWED, OPERATORS)), ids=lambda v: str(v)
)
def test_each_operator_is_accepted_exactly_on_the_field_types_section_8_allows(
    field_type: FieldType, op: str
) -> None:
    name = FIELD_OF_TYPE[field_type]
    raw = clause(name, op, value_for(op, field_type))
    if op in ALLOWED[field_type]:
        tree = parse(raw)
        assert isinstance(tree, Clause)
        assert (tree.field, tree.op, tree.field_type) == (name, op, field_type)
    else:
        error = rejection(raw)
        assert error.code == ErrorCode.INVALID_PARAMS
        assert error.field == "filter.op"
        assert f"`{name}`" in error.message


def test_a_geo_field_may_be_declared_but_no_operator_is_supported_on_it() -> None:
    error = rejection(clause("where", "exists", True))
    assert error.field == "filter.op"
    assert "`where`" in error.message
    assert "no operator supports" in error.message


# --- value JSON type × field type -----------------------------------------------------

VALUE_SAMPLES: dict[str, object] = {
    "string": "en",
    "int": 7,
    "integral_float": 7.0,
    "fractional_float": 7.5,
    "bool": True,
    "rfc3339": "2017-06-12T00:00:00Z",
    "array": [1],
    "object": {"a": 1},
}
ACCEPTED_VALUES: dict[FieldType, set[str]] = {
    "keyword": {"string", "rfc3339"},
    "text": {"string", "rfc3339"},
    "int": {"int", "integral_float"},
    "float": {"int", "integral_float", "fractional_float"},
    "bool": {"bool"},
    "date": {"int", "integral_float", "rfc3339"},
}


@pytest.mark.parametrize(
    ("field_type", "sample"),
    list(itertools.product(ACCEPTED_VALUES, VALUE_SAMPLES)),
    ids=lambda v: str(v),
)
def test_an_eq_value_must_have_a_json_type_compatible_with_the_field_type(
    field_type: FieldType, sample: str
) -> None:
    name = FIELD_OF_TYPE[field_type]
    raw = clause(name, "eq", VALUE_SAMPLES[sample])
    if sample in ACCEPTED_VALUES[field_type]:
        assert isinstance(parse(raw), Clause)
    else:
        error = rejection(raw)
        assert error.code == ErrorCode.INVALID_PARAMS
        assert error.field == "filter.value"
        assert f"`{name}`" in error.message


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("score", 7, 7.0),
        ("year", 7.0, 7),
        ("published", "2017-06-12T00:00:00Z", JUNE_12_2017_MS),
        ("published", JUNE_12_2017_MS, JUNE_12_2017_MS),
        ("lang", "日本語😀", "日本語😀"),
    ],
)
def test_values_are_normalised_to_the_field_type(
    field: str, value: object, expected: object
) -> None:
    tree = parse(clause(field, "eq", value))
    assert isinstance(tree, Clause)
    assert tree.value == expected
    assert type(tree.value) is type(expected)


def test_a_boolean_is_not_a_number_for_int_float_or_date_fields() -> None:
    for field in ("year", "score", "published"):
        assert invalid_field(clause(field, "gt", True)) == "filter.value"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("year", 2**53),
        ("year", -(2**53)),
        ("score", 2**53),
        ("published", 2**53),
        ("score", float("nan")),
        ("score", float("inf")),
        ("lang", "a\x00b"),
        ("lang", "\ud800"),
    ],
    ids=repr,
)
def test_values_no_backend_can_compare_exactly_are_rejected(field: str, value: object) -> None:
    assert invalid_field(clause(field, "eq", value)) == "filter.value"


def test_the_largest_safe_integers_are_accepted() -> None:
    tree = parse(clause("year", "in", [2**53 - 1, -(2**53 - 1)]))
    assert isinstance(tree, Clause)
    assert tree.value == (2**53 - 1, -(2**53 - 1))


def test_scalar_operators_reject_an_array_or_object_value() -> None:
    assert invalid_field(clause("lang", "eq", ["en"])) == "filter.value"
    assert invalid_field(clause("year", "gt", {"x": 1})) == "filter.value"
    assert invalid_field(clause("body", "contains", ["x"])) == "filter.value"


# --- in / nin -------------------------------------------------------------------------


def test_in_and_nin_need_a_non_empty_array() -> None:
    for op in ("in", "nin"):
        assert invalid_field(clause("lang", op, [])) == "filter.value"
        assert invalid_field(clause("lang", op, "en")) == "filter.value"


def test_in_names_the_offending_element_of_its_array() -> None:
    assert invalid_field(clause("lang", "in", ["en", 3])) == "filter.value[1]"
    assert invalid_field(clause("year", "nin", [1, 2, [3]])) == "filter.value[2]"
    assert invalid_field(clause("draft", "in", [True, None])) == "filter.value[1]"


def test_in_arrays_are_bounded_in_length() -> None:
    assert isinstance(parse(clause("year", "in", list(range(1024)))), Clause)
    assert invalid_field(clause("year", "in", list(range(1025)))) == "filter.value"


def test_in_values_are_normalised_and_deduplicated_in_order() -> None:
    tree = parse(
        clause("published", "in", ["2017-06-12", JUNE_12_2017_MS, 0, "1970-01-01T00:00:00Z"])
    )
    assert isinstance(tree, Clause)
    assert tree.value == (JUNE_12_2017_MS, 0)


# --- exists and nulls -----------------------------------------------------------------


def test_exists_takes_a_boolean_value() -> None:
    tree = parse(clause("lang", "exists", False))
    assert tree == Clause("lang", "exists", False, "keyword")
    assert invalid_field(clause("lang", "exists", "yes")) == "filter.value"
    assert invalid_field(clause("lang", "exists", 1)) == "filter.value"


@pytest.mark.parametrize("op", OPERATORS)
def test_a_null_or_missing_value_is_absent_and_so_rejected_for_every_operator(op: str) -> None:
    field = "body" if op == "contains" else "year"
    assert invalid_field(clause(field, op, None)) == "filter.value"
    assert invalid_field({"field": field, "op": op}) == "filter.value"


def test_null_members_of_a_node_count_as_absent() -> None:
    raw = {"and": [clause("lang", "eq", "en")], "or": None, "field": None, "not": None}
    assert parse(raw) == And((Clause("lang", "eq", "en", "keyword"),))


def test_unknown_keys_in_a_node_are_ignored() -> None:
    raw = {**clause("lang", "eq", "en"), "x-acme": {"boost": 2}, "_meta": {}}
    assert parse(raw) == Clause("lang", "eq", "en", "keyword")


# --- tree shape -----------------------------------------------------------------------


def test_the_section_8_example_parses_to_a_typed_tree() -> None:
    raw = {
        "and": [
            clause("lang", "eq", "en"),
            {"or": [clause("year", "gte", 2023), clause("lang", "in", ["news", "blog"])]},
        ]
    }
    assert parse(raw) == And(
        (
            Clause("lang", "eq", "en", "keyword"),
            Or(
                (
                    Clause("year", "gte", 2023, "int"),
                    Clause("lang", "in", ("news", "blog"), "keyword"),
                )
            ),
        )
    )


def test_the_parsed_tree_is_immutable_and_hashable() -> None:
    tree = parse({"not": {"or": [clause("lang", "in", ["a", "b"])]}})
    assert tree == Not(Or((Clause("lang", "in", ("a", "b"), "keyword"),)))
    assert hash(tree) == hash(parse({"not": {"or": [clause("lang", "in", ["a", "b"])]}}))
    with pytest.raises(AttributeError):
        tree.child = tree  # type: ignore[misc]


@pytest.mark.parametrize("combinator", ["and", "or"])
def test_an_empty_combinator_is_invalid_params(combinator: str) -> None:
    assert invalid_field({combinator: []}) == f"filter.{combinator}"
    assert invalid_field({"not": {combinator: []}}) == f"filter.not.{combinator}"


@pytest.mark.parametrize("combinator", ["and", "or"])
def test_a_combinator_must_hold_an_array(combinator: str) -> None:
    assert invalid_field({combinator: clause("lang", "eq", "en")}) == f"filter.{combinator}"


def test_conflicting_node_shapes_are_invalid_params() -> None:
    leaf = clause("lang", "eq", "en")
    assert invalid_field({"and": [leaf], **leaf}) == "filter"
    assert invalid_field({"and": [leaf], "or": [leaf]}) == "filter"
    assert invalid_field({"not": leaf, "op": "eq"}) == "filter"
    assert invalid_field({"or": [{"and": [leaf], "not": leaf}]}) == "filter.or[0]"


@pytest.mark.parametrize("raw", [None, [], "lang = en", 1, True, {}, {"value": 1}], ids=repr)
def test_a_node_that_is_neither_a_combinator_nor_a_clause_is_invalid_params(raw: object) -> None:
    assert invalid_field(raw) == "filter"


def test_not_must_hold_an_object() -> None:
    assert invalid_field({"not": [clause("lang", "eq", "en")]}) == "filter.not"


def test_field_and_op_must_be_strings() -> None:
    assert invalid_field({"field": 3, "op": "eq", "value": 1}) == "filter.field"
    assert invalid_field({"field": "year", "op": ["eq"], "value": 1}) == "filter.op"
    assert invalid_field({"op": "eq", "value": 1}) == "filter.field"
    assert invalid_field({"field": "year", "value": 1}) == "filter.op"


def test_errors_name_the_json_path_of_the_offending_clause() -> None:
    raw: dict[str, Any] = {
        "and": [
            clause("lang", "eq", "en"),
            {"or": [clause("year", "gte", 2023), clause("year", "gt", "2023")]},
        ]
    }
    assert invalid_field(raw) == "filter.and[1].or[1].value"
    raw["and"][1]["or"][1] = clause("lang", "gt", "a")
    assert invalid_field(raw) == "filter.and[1].or[1].op"
    raw["and"][1]["or"][1] = clause("nope", "eq", "a")
    assert invalid_field(raw) == "filter.and[1].or[1].field"


def test_the_path_prefix_can_be_chosen_by_the_caller() -> None:
    with pytest.raises(RCPError) as caught:
        parse_filter({"not": clause("nope", "eq", 1)}, FIELDS, OPERATORS, path="queries[2].filter")
    assert caught.value.field == "queries[2].filter.not.field"


# --- fields and operators: -32602 vs -32005 -------------------------------------------


def test_a_field_that_is_not_advertised_is_invalid_params_naming_it() -> None:
    error = rejection(clause("author", "eq", "me"))
    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.field == "filter.field"
    assert "`author`" in error.message
    assert error.data == {"field": "filter.field"}


def test_field_names_are_case_sensitive() -> None:
    assert invalid_field(clause("Lang", "eq", "en")) == "filter.field"


def test_an_operator_defined_but_not_advertised_is_option_unsupported() -> None:
    error = rejection({"or": [clause("body", "contains", "x")]}, operators=["eq", "in"])
    assert error.code == ErrorCode.OPTION_UNSUPPORTED
    assert error.option == "filter.op:contains"
    assert error.data == {"option": "filter.op:contains"}
    assert "`body`" in error.message


def test_an_operator_rcp_does_not_define_is_invalid_params_even_if_advertised() -> None:
    error = rejection(clause("lang", "regex", "^e"), operators=[*OPERATORS, "regex"])
    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.field == "filter.op"
    assert "`lang`" in error.message


def test_operator_names_are_case_sensitive() -> None:
    assert invalid_field(clause("lang", "EQ", "en")) == "filter.op"


def test_an_unadvertised_field_is_reported_before_an_unadvertised_operator() -> None:
    error = rejection(clause("author", "contains", "me"), operators=["eq"])
    assert error.code == ErrorCode.INVALID_PARAMS
    assert error.field == "filter.field"


def test_advertised_operators_are_accepted() -> None:
    assert parse(clause("lang", "eq", "en"), operators=["eq"]) == Clause(
        "lang", "eq", "en", "keyword"
    )


def test_a_long_client_supplied_name_is_not_echoed_in_full() -> None:
    error = rejection(clause("x" * 10_000, "eq", 1))
    assert len(error.message) < 200


# --- dates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2017-06-12T00:00:00Z", JUNE_12_2017_MS),
        ("2017-06-12T02:00:00+02:00", JUNE_12_2017_MS),
        ("2017-06-11T19:30:00-04:30", JUNE_12_2017_MS),
        ("2017-06-12t00:00:00z", JUNE_12_2017_MS),
        ("2017-06-12 00:00:00Z", JUNE_12_2017_MS),
        ("2017-06-12T00:00:00", JUNE_12_2017_MS),
        ("2017-06-12", JUNE_12_2017_MS),
        ("2017-06-12T00:00:00.1Z", JUNE_12_2017_MS + 100),
        ("2017-06-12T00:00:00.123456789Z", JUNE_12_2017_MS + 123),
        ("1969-12-31T23:59:59.999Z", -1),
        ("1970-01-01T00:00:00Z", 0),
        ("2016-12-31T23:59:60Z", 1483228800000),
        (JUNE_12_2017_MS, JUNE_12_2017_MS),
        (float(JUNE_12_2017_MS), JUNE_12_2017_MS),
        (-1, -1),
    ],
)
def test_dates_in_both_encodings_normalise_to_epoch_milliseconds(
    value: object, expected: int
) -> None:
    tree = parse(clause("published", "gte", value))
    assert tree == Clause("published", "gte", expected, "date")


@pytest.mark.parametrize(
    "value",
    [
        "2017-02-30",
        "2017-13-01",
        "2017-06-12T24:00:00Z",
        "2017-06-12T00:61:00Z",
        "2017-06-12T00:00:61Z",
        "2017-06-12T00:00:00+24:00",
        "2017-06-12T00:00:00+02:60",
        "2017-06-12T00:00Z",
        "2017-06-12T00:00:00.Z",
        "0000-01-01",
        "２０１７-06-12",
        "12/06/2017",
        "yesterday",
        "",
        " 2017-06-12",
        1.5,
        True,
        2**53,
        None,
    ],
    ids=repr,
)
def test_unparseable_dates_are_invalid_params(value: object) -> None:
    assert invalid_field(clause("published", "eq", value)) == "filter.value"


# --- resource bounds (§15.5) ----------------------------------------------------------


def nested_nots(depth: int) -> dict[str, object]:
    node: dict[str, object] = clause("lang", "eq", "en")
    for _ in range(depth - 1):
        node = {"not": node}
    return node


def test_nesting_up_to_32_nodes_deep_is_accepted() -> None:
    tree = parse(nested_nots(32))
    for _ in range(31):
        assert isinstance(tree, Not)
        tree = tree.child
    assert tree == Clause("lang", "eq", "en", "keyword")


def test_nesting_deeper_than_32_nodes_is_invalid_params() -> None:
    assert invalid_field(nested_nots(33)) == "filter" + ".not" * 32
    deep_and: dict[str, object] = clause("lang", "eq", "en")
    for _ in range(40):
        deep_and = {"and": [deep_and]}
    assert invalid_field(deep_and) == "filter" + ".and[0]" * 32


def test_a_tree_of_more_than_512_nodes_is_invalid_params() -> None:
    leaf = clause("year", "eq", 1)
    assert isinstance(parse({"or": [leaf] * 511}), Or)
    assert invalid_field({"or": [leaf] * 512}) == "filter.or[511]"
