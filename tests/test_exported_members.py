from __future__ import annotations

import rcpkit
import rcpkit.protocol
import rcpkit.server


def test_the_top_level_exports_exactly_the_intended_names() -> None:
    assert set(rcpkit.__all__) == {
        "App",
        "ErrorCode",
        "RCPError",
        "RequestContext",
        "Server",
        "__version__",
        "matches",
        # The in-process API (rcpkit.library), imported on first use.
        "AddResult",
        "AsyncIndex",
        "Index",
        "LibraryError",
        "SearchResult",
        "open",
        "open_async",
    }


def test_every_exported_name_exists() -> None:
    for module in (rcpkit, rcpkit.protocol, rcpkit.server):
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_the_server_package_exports_its_two_tiers() -> None:
    expected = {"App", "Server", "RequestContext", "matches", "serve", "serve_stdio"}
    assert expected == set(rcpkit.server.__all__)
