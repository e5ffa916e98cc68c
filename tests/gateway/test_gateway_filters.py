"""The gateway's own §8 check: what it refuses itself and what it leaves to its engines."""

from __future__ import annotations

import pytest

from rcpkit.gateway.filters import validate_filter
from rcpkit.protocol.capabilities import FilterCapability
from rcpkit.protocol.errors import RCPError

CAPABILITY = FilterCapability(fields={"folders": "keyword", "path": "text", "year": "int"})


def test_contains_on_a_keyword_field_is_left_to_the_engines_that_know_its_shape() -> None:
    # An advertisement cannot say a field holds arrays; an engine that does not
    # declare `folders` array-valued refuses the clause itself (-32602).
    validate_filter({"field": "folders", "op": "contains", "value": "docs/api"}, CAPABILITY)
    validate_filter({"field": "path", "op": "contains", "value": "api/"}, CAPABILITY)


def test_a_mistyped_value_is_still_refused_by_the_gateway() -> None:
    with pytest.raises(RCPError) as caught:
        validate_filter({"field": "year", "op": "gt", "value": "x"}, CAPABILITY)
    assert caught.value.field == "filter.value"
