"""§8 validation: an untrusted ``filter`` object → a typed tree, or a precise error.

Errors name the JSON path of the offending part inside params in ``data.field``
(``filter.and[0].or[1].op``, ``filter.not.value[2]``) and the filter field in the
message. An operator RCP defines but the server does not advertise is -32005
with ``data.option`` ``filter.op:<op>`` (§8, §12); everything else is -32602.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from rcpkit.protocol.errors import RCPError
from rcpkit.protocol.filters._field_types import kind_of
from rcpkit.protocol.filters._operators import (
    OPERATOR_RULES,
    ValueShape,
    applies,
    is_filterable,
    operators_for,
)
from rcpkit.protocol.filters._tree import (
    OPERATORS,
    And,
    Clause,
    ClauseValue,
    FieldType,
    Filter,
    Not,
    Operator,
    Or,
    Scalar,
)

__all__ = ["MAX_DEPTH", "MAX_LIST_VALUES", "MAX_NODES", "parse_filter"]

# §15.5: bounds on what one untrusted filter may cost to validate, compile and run.
MAX_DEPTH = 32  # nodes on the longest root-to-leaf path
MAX_NODES = 512  # combinators and clauses: SQLite bounds expression height at 1000
MAX_LIST_VALUES = 1024  # values in one `in`/`nin` array

_COMBINATORS = ("and", "or", "not")
_ECHO_LIMIT = 64  # client-chosen names are echoed in messages, but not unboundedly


def parse_filter(
    raw: object,
    fields: Mapping[str, FieldType],
    operators: Collection[str],
    *,
    array_fields: Collection[str] = (),
    path: str = "filter",
) -> Filter:
    """Validate ``raw`` against the advertised ``fields`` and ``operators`` (§8).

    ``array_fields`` names the fields that hold arrays, on which ``contains`` is
    element membership; elsewhere it is allowed on ``text`` fields only.

    Returns the normalised tree: dates as epoch-ms ints, float-field numbers as
    floats, ``in``/``nin`` values as de-duplicated tuples. An explicit ``null``
    anywhere in a node counts as absent (§4.6), and unknown keys are ignored.
    A caller with no filter at all should not call this: ``None`` is -32602.
    """
    return _Walk(fields, frozenset(operators), frozenset(array_fields)).node(raw, path, 1)


@dataclass(slots=True)
class _Walk:
    fields: Mapping[str, FieldType]
    operators: frozenset[str]
    array_fields: frozenset[str]
    nodes: int = 0

    def node(self, raw: object, path: str, depth: int) -> Filter:
        if depth > MAX_DEPTH:
            raise _invalid(path, f"filter nesting at `{path}` is deeper than {MAX_DEPTH}")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _invalid(path, f"filter has more than {MAX_NODES} nodes (at `{path}`)")
        if not isinstance(raw, Mapping):
            raise _invalid(path, f"filter node `{path}` must be an object")
        shape = _shape(raw, path)
        return _NODE_PARSERS[shape](self, raw, path, depth)


_NodeParser = Callable[[_Walk, Mapping[object, object], str, int], Filter]


def _shape(raw: Mapping[object, object], path: str) -> str:
    present = [key for key in _COMBINATORS if raw.get(key) is not None]
    is_clause = raw.get("field") is not None or raw.get("op") is not None
    if len(present) > 1:
        keys = " and ".join(f"`{key}`" for key in present)
        raise _invalid(path, f"filter node `{path}` has both {keys}; use exactly one")
    if present and is_clause:
        raise _invalid(path, f"filter node `{path}` mixes `{present[0]}` with a field clause")
    if present:
        return present[0]
    if is_clause:
        return "clause"
    raise _invalid(path, f"filter node `{path}` needs one of `and`, `or`, `not`, or `field`+`op`")


def _junction(build: Callable[[tuple[Filter, ...]], Filter], key: str) -> _NodeParser:
    def parse(walk: _Walk, raw: Mapping[object, object], path: str, depth: int) -> Filter:
        children = raw[key]
        here = f"{path}.{key}"
        if not isinstance(children, list | tuple):
            raise _invalid(here, f"`{here}` must be an array of filter nodes")
        if not children:
            raise _invalid(here, f"`{here}` must not be empty (§8)")
        return build(
            tuple(walk.node(child, f"{here}[{i}]", depth + 1) for i, child in enumerate(children))
        )

    return parse


def _negation(walk: _Walk, raw: Mapping[object, object], path: str, depth: int) -> Filter:
    return Not(walk.node(raw["not"], f"{path}.not", depth + 1))


def _clause(walk: _Walk, raw: Mapping[object, object], path: str, depth: int) -> Filter:
    field = raw.get("field")
    if not isinstance(field, str):
        raise _invalid(f"{path}.field", f"filter clause `{path}` needs a string `field`")
    op = _operator(raw.get("op"), field, path)
    field_type = walk.fields.get(field)
    if field_type is None:
        valid = ", ".join(sorted(walk.fields)) or "none"
        raise _invalid(
            f"{path}.field",
            f"field {_echo(field)} is not an advertised filter field (advertised: {valid})",
        )
    if op not in walk.operators:
        raise RCPError.option_unsupported(
            f"filter.op:{op}",
            f"operator `{op}` (on field {_echo(field)} at `{path}`) is not advertised",
        )
    rule = OPERATOR_RULES[op]
    array_valued = field in walk.array_fields
    if not applies(op, field_type, array_valued):
        raise _invalid(f"{path}.op", _not_applicable(op, field, field_type, array_valued))
    site = _Site(field, field_type, op, f"{path}.value")
    value = _VALUE_PARSERS[rule.shape](raw.get("value"), site)
    return Clause(field, op, value, field_type)


def _operator(raw: object, field: str, path: str) -> Operator:
    if isinstance(raw, str):
        for op in OPERATORS:
            if raw == op:
                return op
    shown = _echo(raw) if isinstance(raw, str) else "a non-string"
    raise _invalid(
        f"{path}.op",
        f"unknown operator {shown} on field {_echo(field)}; expected one of {', '.join(OPERATORS)}",
    )


def _not_applicable(op: Operator, field: str, field_type: FieldType, array_valued: bool) -> str:
    if not is_filterable(field_type):
        return f"field {_echo(field)} has type `{field_type}`, which no operator supports"
    shape = "an array-valued" if array_valued else "a"
    allowed = ", ".join(operators_for(field_type, array_valued))
    return (
        f"operator `{op}` is not allowed on {_echo(field)} ({shape} {field_type} field);"
        f" it takes {allowed}"
    )


@dataclass(frozen=True, slots=True)
class _Site:
    """Where a value sits, for coercion and for error messages."""

    field: str
    field_type: FieldType
    op: Operator
    path: str

    def missing(self) -> RCPError:
        return _invalid(self.path, f"`{self.op}` on {_echo(self.field)} needs a `value`")

    def scalar(self, raw: object, path: str) -> Scalar:
        kind = kind_of(self.field_type)
        value = kind.coerce(raw)
        if value is None:
            message = (
                f"{_echo(self.field)} is a {self.field_type} field: value must be {kind.expected}"
            )
            raise _invalid(path, message)
        return value


def _scalar_value(raw: object, site: _Site) -> ClauseValue:
    if raw is None:
        raise site.missing()
    if isinstance(raw, list | tuple | Mapping):
        raise _invalid(site.path, f"`{site.op}` on {_echo(site.field)} needs a single value")
    return site.scalar(raw, site.path)


def _array_value(raw: object, site: _Site) -> ClauseValue:
    if raw is None:
        raise site.missing()
    if not isinstance(raw, list | tuple) or not raw:
        raise _invalid(site.path, f"`{site.op}` on {_echo(site.field)} needs a non-empty array")
    if len(raw) > MAX_LIST_VALUES:
        message = f"`{site.op}` on {_echo(site.field)} takes at most {MAX_LIST_VALUES} values"
        raise _invalid(site.path, message)
    values = _elements(raw, site)
    return tuple(dict.fromkeys(values))


def _elements(raw: Sequence[object], site: _Site) -> list[Scalar]:
    values: list[Scalar] = []
    for i, item in enumerate(raw):
        here = f"{site.path}[{i}]"
        if isinstance(item, list | tuple | Mapping):
            raise _invalid(here, f"`{site.op}` on {_echo(site.field)} takes an array of scalars")
        values.append(site.scalar(item, here))
    return values


def _flag_value(raw: object, site: _Site) -> ClauseValue:
    if raw is None:
        raise site.missing()
    if not isinstance(raw, bool):
        raise _invalid(site.path, f"`{site.op}` on {_echo(site.field)} takes true or false")
    return raw


_NODE_PARSERS: Mapping[str, _NodeParser] = {
    "and": _junction(And, "and"),
    "or": _junction(Or, "or"),
    "not": _negation,
    "clause": _clause,
}

_VALUE_PARSERS: Mapping[ValueShape, Callable[[object, _Site], ClauseValue]] = {
    "scalar": _scalar_value,
    "array": _array_value,
    "flag": _flag_value,
}


def _echo(name: str) -> str:
    shown = name if len(name) <= _ECHO_LIMIT else name[:_ECHO_LIMIT] + "…"
    return f"`{shown}`"


def _invalid(field: str, message: str) -> RCPError:
    return RCPError.invalid_params(field, message)
