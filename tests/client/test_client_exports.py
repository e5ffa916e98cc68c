"""The public surface of the client, federation, gateway and check packages is exactly this."""

from __future__ import annotations

import importlib

import pytest

EXPECTED = {
    "rcpkit.client": {
        "MAX_PROTOCOL_VERSION", "MIN_PROTOCOL_VERSION", "NO_RETRY", "CallOptions",
        "CapabilityMissing", "Channel", "Client", "Connection", "DeadlineExceeded", "Endpoint",
        "Event", "HttpChannel", "HttpEndpoint", "MalformedResult", "MemoryChannel",
        "OptionUnsupported", "Outgoing", "Receiver", "RetryPolicy", "StdioChannel",
        "StdioEndpoint", "StreamChannel", "StreamingCall", "SyncClient", "SyncStreamingCall",
        "TransportClosed", "VersionUnsupported", "connect_in_memory",
    },
    "rcpkit.federation": {
        "DEDUP_KEYS", "DEFAULT_DEPTH", "FEDERATION_PATH_ENV", "FUSION_STRATEGIES",
        "RRF_K_DEFAULT", "Connector", "EngineFailure", "EngineHits", "EngineSpec", "EngineState",
        "FederatedResult", "Federation", "Fused", "FusionConfig", "Hop", "NoLiveEngine",
        "Registry", "RegistryError", "Selector", "UnknownEngine", "connect_engine", "fuse_hits",
        "load_registry", "parse_registry",
    },
    "rcpkit.gateway": {
        "GatewayServer", "build_gateway", "default_identity",
        "filter_capability", "graph_capability", "retrieve_capability",
    },
    "rcpkit.check": {
        "ALL_CHECKS", "LEVELS", "Check", "Exchange", "Failed", "HttpPeer", "Outcome", "Peer",
        "Report", "Requirement", "Skipped", "StdioPeer", "check",
        "render_json", "render_text", "requirements", "run_checks",
    },
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_package_exports_exactly_its_intended_names(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == EXPECTED[name]
    for exported in module.__all__:
        assert hasattr(module, exported), f"{name}.{exported}"


@pytest.mark.parametrize("name", ["rcpkit.cli.gateway_run", "rcpkit.cli.check_run"])
def test_the_cli_modules_offer_add_arguments_and_run(name: str) -> None:
    import argparse

    module = importlib.import_module(name)
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    assert callable(module.run)


@pytest.mark.parametrize("name", ["rcpkit.check", "rcpkit.gateway", "rcpkit.evaluation"])
def test_the_library_packages_declare_no_command_line(name: str) -> None:
    # Options and commands live under rcpkit/cli/ (issue 28); a library takes typed config.
    module = importlib.import_module(name)
    assert not {"add_arguments", "run"} & set(module.__all__)
