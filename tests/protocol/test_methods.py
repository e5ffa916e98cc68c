from __future__ import annotations

import json

from rcpkit.protocol.methods import METHODS, NOTIFICATIONS
from support import shared_path

SCHEMA = shared_path("reference", "rcp-1.0.schema.json")


def test_the_registry_holds_every_method_of_section_7() -> None:
    assert set(METHODS) == {
        "initialize", "info", "ping", "shutdown", "embed", "embed/sparse", "embed/multi",
        "rerank", "retrieve", "query/transform", "graph", "index/add", "index/delete",
        "catalog/list", "feedback", "memory/build", "memory/recall",
    }  # fmt: skip
    assert set(NOTIFICATIONS) == {
        "notifications/progress",
        "notifications/cancel",
        "notifications/log",
    }


def test_the_registry_agrees_with_the_normative_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    (core,) = (part for part in schema["$defs"]["MethodName"]["anyOf"] if "enum" in part)
    assert set(METHODS) == set(core["enum"])


def test_only_lifecycle_methods_are_ungated() -> None:
    ungated = {name for name, spec in METHODS.items() if spec.capability is None}
    assert ungated == {"initialize", "info", "ping", "shutdown"}
    assert all(METHODS[name].before_initialize for name in ungated)
