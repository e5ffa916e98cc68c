"""A hand-written ``App`` server passes the §8 filter checks with no filter code of its own."""

from __future__ import annotations

import textwrap
from pathlib import Path

from check_support import PATIENT, PYTHON, run_check

SERVER = textwrap.dedent(
    """
    from rcpkit import App, matches

    DOCS = [
        {"id": "a", "text": "retrieval of news", "meta": {"tag": "news", "year": 2024}},
        {"id": "b", "text": "retrieval papers", "meta": {"tag": "paper", "year": 2019}},
    ]
    app = App("handmade", "1.0")


    @app.retrieve(filter={"tag": "keyword", "year": "int"})
    def search(query: str, k: int = 10, filter=None):
        return [
            {"id": d["id"], "score": 1.0, "text": d["text"], "meta": d["meta"]}
            for d in DOCS
            if matches(filter, d["meta"])
        ][:k]


    app.run_stdio()
    """
)


def test_a_hand_written_app_passes_every_filter_check(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    report = run_check([PYTHON, str(script)], pass_env=("PYTHONPATH",), timeout=PATIENT)
    outcomes = {o.id: o.status for o in report.outcomes if o.id.startswith("filter")}
    assert outcomes == {
        "filter-applied": "PASS",
        "filter-unknown-field": "PASS",
        "filter-empty": "PASS",
        "filter-operator": "SKIP",  # every operator is advertised: nothing to refuse
    }
    assert report.passed, [(o.id, o.detail) for o in report.outcomes if o.status == "FAIL"]
