"""Issue 52 item 10: a query none of whose words any chunk holds is not shown as a perfect hit.

`rcpkit query timeout --filter folders=envvar` over CMake's docs ranked a chunk
without "timeout" first at score 1.000: min-max over the dense arm alone mapped
its nearest chunk to 1, and the feedback pass learnt terms from those chunks and
scored them back as lexical evidence. Through the real CLI and the bundled
MiniLM model: the score stays on the cosine's own scale, the result says no chunk
holds the query's words, and where feedback runs the CLI says which terms it added.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import rcpkit

# Long enough (over 30 analysed terms a chunk) for the default feedback pass to run.
ENVVAR = {
    "CC.md": "Preferred executable for compiling C language files. The environment "
    "variable is read by CMake on the first configuration of a build tree only, to pick "
    "the compiler; later runs keep the cached compiler path. Set it before the first "
    "configure step of the project, or clear the cache and configure again.",
    "CTEST_OUTPUT_ON_FAILURE.md": "Boolean environment variable that controls whether "
    "the output of failed tests is logged. When set, the test driver prints every line "
    "a failing test wrote, so a continuous integration log shows why the test failed "
    "without opening the log files of the build tree afterwards.",
    "CMAKE_BUILD_TYPE.md": "Specifies the build type on single configuration "
    "generators. The environment variable sets the default value of the cache entry the "
    "first time a build tree is configured: Debug, Release, RelWithDebInfo or "
    "MinSizeRel. A value given on the command line takes precedence over it.",
}
PROP = {
    "TIMEOUT.md": "How many seconds to allow for this test. The timeout property stops a "
    "test that runs too long and reports it as failed, so a hung test cannot block the "
    "whole run. A timeout of zero means the test may run without a limit.",
}


def _index(tmp_path: Path) -> str:
    for folder, documents in (("envvar", ENVVAR), ("prop", PROP)):
        (tmp_path / "docs" / folder).mkdir(parents=True)
        for name, text in documents.items():
            (tmp_path / "docs" / folder / name).write_text(f"# {name[:-3]}\n\n{text}\n")
    index = str(tmp_path / "idx")
    indexed = rcpkit("index", str(tmp_path / "docs"), "--index", index)
    assert indexed.returncode == 0, indexed.stderr
    return index


def test_a_filtered_query_no_chunk_matches_is_not_scored_as_a_perfect_hit(
    tmp_path: Path,
) -> None:
    index = _index(tmp_path)
    asked = ("query", "timeout", "--filter", "folders=envvar", "--index", index)
    answered = rcpkit(*asked, "--json")
    assert answered.returncode == 0, answered.stderr
    result = json.loads(answered.stdout)
    hits = result["hits"]
    assert hits and all("timeout" not in hit["text"].lower() for hit in hits)
    assert "no chunk contains the query's words" in result["usage"]["notes"]
    for hit in hits:
        # No lexical evidence is claimed, and the score is no higher than the chunk's
        # cosine similarity on its own [-1, 1] scale: an unrelated chunk scores low.
        assert "sparse" not in hit["scores"]
        assert hit["score"] <= (hit["scores"]["dense"] + 1) / 2
    table = rcpkit(*asked)
    assert table.returncode == 0, table.stderr
    assert "note: no chunk contains the query's words" in table.stdout.splitlines()[1]


def test_the_cli_says_which_terms_the_feedback_pass_added(tmp_path: Path) -> None:
    index = _index(tmp_path)
    answered = rcpkit("query", "failed test output", "--index", index, "--json")
    assert answered.returncode == 0, answered.stderr
    notes = json.loads(answered.stdout)["usage"]["notes"]
    (added,) = [n for n in notes if n.startswith("feedback added the terms: ")]
    terms = added.removeprefix("feedback added the terms: ").split(", ")
    assert terms and not {"fail", "failed", "test", "output"} & set(terms)
    assert "no chunk contains the query's words" not in notes
    table = rcpkit("query", "failed test output", "--index", index)
    assert f"note: {added}" in table.stdout
