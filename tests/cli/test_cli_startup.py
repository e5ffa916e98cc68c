"""The `rcpkit` parser: one module per subcommand, and declaring options stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys

import rcpkit.federation.fusion as federation_fusion
from rcpkit.cli import COMMANDS
from rcpkit.cli.gateway_options import DEDUPS, FUSIONS

HEAVY = ("numpy", "starlette", "rcpkit.client", "rcpkit.federation", "rcpkit.engine")


def test_building_the_parser_imports_no_engine_client_federation_or_web_framework() -> None:
    script = (
        "import json, sys; from rcpkit.cli import _parser; _parser(); "
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []


def test_every_subcommand_is_a_registered_module_with_help_options_and_run() -> None:
    wanted = (
        "index serve query stats show delete tenants export backup eval collections db solr demo "
        "gateway check mcp console"
    )
    assert list(COMMANDS) == [*wanted.split(), "bench"]
    for name, command in COMMANDS.items():
        assert command.HELP, name
        assert callable(command.add_arguments) and callable(command.run), name


def test_the_gateway_option_choices_name_the_federation_strategies_and_dedup_keys() -> None:
    assert set(FUSIONS) == set(federation_fusion.FUSION_STRATEGIES)
    assert set(DEDUPS) == set(federation_fusion.DEDUP_KEYS)
