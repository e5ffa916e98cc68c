"""Packages the CLI imports at start-up export their names lazily, through one helper."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

LAZY = ("rcpkit", "rcpkit.check", "rcpkit.evaluation", "rcpkit.gateway", "rcpkit.observe")
LAZY += ("rcpkit.transport.http",)


@pytest.mark.parametrize("package", LAZY)
def test_every_exported_name_resolves_and_an_unknown_one_is_an_attribute_error(
    package: str,
) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = module.nothing_here


def test_importing_the_packages_imports_nothing_beyond_rcpkit_itself() -> None:
    script = (
        "import json, sys, rcpkit; before = set(sys.modules); "
        f"import {', '.join(LAZY)}; "
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert set(json.loads(done.stdout)) <= {*LAZY, "rcpkit._lazy"}
