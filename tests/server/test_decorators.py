"""App's decorators are generated from the method registry, one per method, typed."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from rcpkit.protocol import messages as m
from rcpkit.protocol.methods import METHODS
from rcpkit.server._decorators import MethodDecorators
from rcpkit.server._generate import TARGET, render
from rcpkit.server.app import App
from rcpkit.server.lowlevel import CAPABILITY_TYPES


def test_the_checked_in_decorators_are_what_the_generator_writes_from_the_registry() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(), "run: python -m rcpkit.server._generate"


def test_every_gated_method_has_a_decorator_defined_in_the_class_and_nothing_else_does() -> None:
    gated = {spec.python_name for spec in METHODS.values() if spec.capability is not None}
    defined = {
        name
        for name, member in vars(MethodDecorators).items()
        if inspect.isfunction(member) and not name.startswith("_") and name != "method"
    }
    assert defined == gated
    assert not hasattr(App, "__getattr__")
    with pytest.raises(AttributeError):
        _ = App("a", "1").ping  # a lifecycle method belongs to the runtime


def test_a_decorators_keywords_are_its_capabilitys_fields() -> None:
    for spec in METHODS.values():
        if spec.capability is None:
            continue
        keywords = set(inspect.signature(getattr(App, spec.python_name)).parameters)
        fields = {field.name for field in msgspec.structs.fields(CAPABILITY_TYPES[spec.capability])}
        extra = {"filter"} if spec.name == "retrieve" else set()
        assert keywords == {"self", "capability", "mode"} | fields | extra, spec.name


def test_a_choice_the_capability_does_not_have_is_refused_when_the_handler_is_registered() -> None:
    app = App("a", "1")
    with pytest.raises(ValueError, match="retrieve"):
        app.retrieve(modes=["fuzzy"])(lambda params: m.RetrieveResult(hits=[]))


def test_keywords_left_out_are_not_advertised_and_sequences_become_lists() -> None:
    app = App("a", "1")
    app.rerank(methods=("colbert",))(lambda params: m.RerankResult(hits=[]))
    assert app.server.capabilities.to_wire() == {"rerank": {"methods": ["colbert"]}}


def test_mypy_checks_a_decorators_keywords_and_its_handlers_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent(
            """
            from rcpkit.protocol import messages as m
            from rcpkit.server import App

            app = App("probe", "1")

            @app.rerank(methods=["cross-encoder"], max_candidates=100)
            def rerank(params: m.RerankParams) -> m.RerankResult:
                return m.RerankResult(scores=[])

            @app.rerank(max_candidate=100)
            def misspelt(params: m.RerankParams) -> m.RerankResult:
                return m.RerankResult(scores=[])

            @app.index_delete()
            def wrong_params(params: m.RerankParams) -> m.IndexDeleteResult:
                return m.IndexDeleteResult(deleted=0)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(probe)],
        capture_output=True,
        text=True,
        timeout=170,
        env={**os.environ, "MYPYPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )
    lines = {line.split(":")[1] for line in done.stdout.splitlines() if ": error:" in line}
    assert lines == {"11", "15"}, done.stdout


test_mypy_checks_a_decorators_keywords_and_its_handlers_types = pytest.mark.timeout(180)(
    test_mypy_checks_a_decorators_keywords_and_its_handlers_types
)
