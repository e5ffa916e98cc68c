"""The harness's index checks (§7.10, §7.11): a writable index that forks the corpus on a
re-add, loses positional ids or counts a repeated delete is caught at L2."""

from __future__ import annotations

import textwrap
from pathlib import Path

from check_support import PATIENT, PYTHON, run_check

FORKING = textwrap.dedent(
    """
    from rcpkit import App

    app = App("forking-index", "1.0")
    DOCS = []


    @app.retrieve(modes=["sparse"])
    def search(query: str, k: int = 10):
        return [{"id": str(n), "score": 1.0, "text": text} for n, text in enumerate(DOCS)][:k]


    @app.index_add()
    def add(params, ctx=None):
        DOCS.extend(document.text for document in params.documents)
        return {"ids": []}  # no positional ids


    @app.index_delete()
    def delete(params, ctx=None):
        return {"deleted": len(params.ids)}  # a repeat still "deletes"


    app.run_stdio()
    """
)


def test_a_forking_index_fails_the_index_checks(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(FORKING)
    report = run_check([PYTHON, str(script)], pass_env=("PYTHONPATH",), timeout=PATIENT)
    outcomes = {o.id: o.status for o in report.outcomes if o.id.startswith("index-")}
    assert outcomes == {
        "index-add-ids": "FAIL",
        "index-upsert": "PASS",  # a silent fork is not visible to the wire check
        "index-delete-idempotent": "FAIL",
    }, [o for o in report.outcomes if o.id.startswith("index-")]


def test_a_server_without_a_writable_index_skips_them(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    read_only = 'App("read-only", "1.0", read_only=True)'
    script.write_text(FORKING.replace('App("forking-index", "1.0")', read_only))
    report = run_check([PYTHON, str(script)], pass_env=("PYTHONPATH",), timeout=PATIENT)
    assert {o.status for o in report.outcomes if o.id.startswith("index-")} == {"SKIP"}
