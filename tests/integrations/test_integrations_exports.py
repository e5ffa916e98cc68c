from __future__ import annotations

import rcpkit.integrations


def test_the_integrations_package_exports_exactly_the_shared_names() -> None:
    assert set(rcpkit.integrations.__all__) == {
        "Connection",
        "Passthrough",
        "Source",
        "hit_metadata",
    }


def test_a_source_is_exactly_one_of_command_url_or_registry() -> None:
    import pytest

    from rcpkit.integrations import Source

    with pytest.raises(ValueError, match="exactly one"):
        Source()
    with pytest.raises(ValueError, match="exactly one"):
        Source(command=("rcpkit", "serve"), url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="`token` is for an HTTP `url`"):
        Source(command=("rcpkit", "serve"), token="t")
