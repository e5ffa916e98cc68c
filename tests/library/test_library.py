"""The in-process API (``rcpkit.open``): documents, filters on any meta key, errors, threads."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import rcpkit
from rcpkit.engine.config import load_config
from rcpkit.engine.open import open_engine
from rcpkit.handlers.engine import build_engine_app

HASHING = "hashing:64"
SAMPLES = Path(str(resources.files("rcpkit") / "samples"))
DOCS = [
    {
        "id": "fox",
        "text": "The quick brown fox jumps over the lazy dog.",
        "meta": {"team": "zoo", "stars": 4, "open": True, "labels": ["animal", "classic"]},
    },
    {
        "id": "tides",
        "text": "Tides follow the gravity of the moon and the sun.",
        "meta": {"team": "sea", "stars": 2.5, "open": False, "labels": ["science"]},
    },
    {
        "id": "cars",
        "text": "Electric cars charge from the grid; a fox is not a car.",
        "meta": {"team": "zoo", "stars": 1, "labels": ["tech"]},
    },
]


@pytest.fixture
def index(tmp_path: Path) -> Any:
    with rcpkit.open(tmp_path / "idx", create=True, embedder=HASHING) as opened:
        opened.add(DOCS)
        yield opened


def _ids(result: Any) -> list[str]:
    return [hit.id for hit in result]


def test_any_meta_key_is_filterable_by_the_type_of_its_first_value(index: Any) -> None:
    assert _ids(index.search("fox", filter={"team": "zoo"})) == ["fox#0", "cars#0"]
    assert _ids(index.search("fox", filter={"open": False})) == ["tides#0"]
    numeric = {"field": "stars", "op": "gte", "value": 2}
    assert sorted(_ids(index.search("fox moon", filter=numeric))) == ["fox#0", "tides#0"]
    member = {"field": "labels", "op": "contains", "value": "tech"}
    assert _ids(index.search("fox", filter=member)) == ["cars#0"]
    both = {"team": "zoo", "stars": [1, 3]}  # shorthand: equality, a list is `in`
    assert _ids(index.search("fox", filter=both)) == ["cars#0"]


def test_first_sight_fields_persist_and_a_server_on_the_index_advertises_them(
    tmp_path: Path, index: Any
) -> None:
    index.close()
    with rcpkit.open(tmp_path / "idx") as again:
        assert _ids(again.search("fox", filter={"team": "sea"})) == ["tides#0"]
    engine = open_engine(load_config(None, index=tmp_path / "idx", embedder=HASHING))
    try:
        advertised = build_engine_app(engine).server.capabilities.filter
        assert advertised is not None and isinstance(advertised.fields, dict)
        assert advertised.fields["team"] == "keyword" and advertised.fields["stars"] == "float"
    finally:
        engine.close()


def test_fields_declared_at_open_filter_values_added_later(tmp_path: Path) -> None:
    with rcpkit.open(
        tmp_path / "idx", create=True, embedder=HASHING, fields={"year": "int", "owner": "keyword"}
    ) as opened:
        opened.add([{"id": "a", "text": "alpha text", "meta": {"owner": "ann", "year": 2024}}])
        opened.add([{"id": "b", "text": "alpha again", "meta": {"owner": "bob", "year": 2020}}])
        assert _ids(opened.search("alpha", filter={"owner": "bob"})) == ["b#0"]
        late = {"field": "year", "op": "gt", "value": 2021}
        assert _ids(opened.search("alpha", filter=late)) == ["a#0"]
        assert opened.stats()["filter_fields"]["owner"] == "keyword"


@pytest.mark.parametrize(
    ("call", "words", "field"),
    [
        (
            lambda ix: ix.search("fox", filter={"nowhere": 1}),
            "not an advertised filter field",
            "filter.field",
        ),
        (
            lambda ix: ix.search("fox", filter={"field": "stars", "op": "gt", "value": "many"}),
            "stars",
            "filter.value",
        ),
        (
            lambda ix: ix.search(
                "fox", filter={"field": "team", "op": "sounds-like", "value": "x"}
            ),
            "sounds-like",
            "filter.op",
        ),
        (lambda ix: ix.search("fox", k=0), "`k`", "k"),
        (lambda ix: ix.search("fox", mode="psychic"), "`mode`", "mode"),
        (lambda ix: ix.search("   "), "no text", "query"),
        (lambda ix: ix.search("fox", cursor="not-a-cursor"), "cursor", "cursor"),
        (lambda ix: ix.add([{"id": "x", "text": "  "}]), "no text", "documents[0].text"),
        (lambda ix: ix.add([{"id": 7, "text": "seven"}]), "id", "documents[0].id"),
        (lambda ix: ix.delete([3]), "strings", "ids"),
    ],
)
def test_bad_input_is_a_library_error_naming_the_parameter(
    index: Any, call: Any, words: str, field: str
) -> None:
    with pytest.raises(rcpkit.LibraryError, match=words) as caught:
        call(index)
    assert caught.value.field == field
    assert index.stats()["documents"] == 3  # nothing was lost


def test_a_closed_index_refuses_calls_with_a_clear_error(index: Any) -> None:
    index.close()
    with pytest.raises(rcpkit.LibraryError, match="is closed"):
        index.search("fox")
    with pytest.raises(rcpkit.LibraryError, match="is closed"):
        index.add(["more text"])


def test_opening_a_missing_index_without_create_says_how(tmp_path: Path) -> None:
    with pytest.raises(rcpkit.LibraryError, match="create=True"):
        rcpkit.open(tmp_path / "nothing-here")
    assert not (tmp_path / "nothing-here").exists()


def test_delete_removes_documents_from_search(index: Any) -> None:
    assert index.delete(["fox", "absent"]) == 1
    assert "fox#0" not in _ids(index.search("quick brown fox"))
    assert index.stats()["documents"] == 2


def test_plain_strings_are_documents_with_minted_ids(index: Any) -> None:
    added = index.add(["Saturn has rings of ice.", "Jupiter has a red spot."])
    assert len(added.ids) == 2 and added.chunks == 2
    assert index.search("rings of ice", k=1)[0].chunk.doc_id == added.ids[0]


def test_many_threads_search_and_add_at_once(index: Any) -> None:
    queries = ["quick fox", "moon gravity", "electric grid", "lazy dog"]
    alone = {query: _ids(index.search(query, filter={"team": ["zoo", "sea"]})) for query in queries}
    start = threading.Barrier(9)
    failures: list[BaseException] = []
    seen: dict[str, list[list[str]]] = {query: [] for query in queries}

    def searcher(query: str) -> None:
        try:
            start.wait()
            for _ in range(5):
                seen[query].append(_ids(index.search(query, filter={"team": ["zoo", "sea"]})))
        except BaseException as error:
            failures.append(error)

    def writer(number: int) -> None:
        try:
            start.wait()
            index.add(
                [
                    {"id": f"extra{number}-{n}", "text": f"note {n}", "meta": {"team": "ink"}}
                    for n in range(5)
                ]
            )
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=searcher, args=(query,)) for query in queries * 2]
    threads.append(threading.Thread(target=writer, args=(1,)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    for query in queries:
        assert all(found == alone[query] for found in seen[query]), query
    assert index.stats()["documents"] == 8


def test_threads_adding_new_meta_keys_while_others_filter(index: Any) -> None:
    start = threading.Barrier(8)
    failures: list[BaseException] = []

    def writer(number: int) -> None:
        try:
            start.wait()
            for n in range(3):
                meta = {f"key{number}_{n}": f"value{n}", "team": "zoo"}
                index.add([{"id": f"w{number}-{n}", "text": f"note {number} {n}", "meta": meta}])
        except BaseException as error:
            failures.append(error)

    def searcher() -> None:
        try:
            start.wait()
            for _ in range(6):
                index.search("fox note", filter={"team": "zoo"})
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    threads += [threading.Thread(target=searcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    for number in range(4):
        for n in range(3):
            found = index.search("note", filter={f"key{number}_{n}": f"value{n}"})
            assert [hit.id for hit in found] == [f"w{number}-{n}#0"]


def test_close_waits_for_a_search_in_flight(index: Any) -> None:
    inside = threading.Event()
    release = threading.Event()
    results: list[Any] = []
    original = index._engine.feedback.quarantined

    def held(tenant: Any) -> Any:  # the pipeline reads quarantine first: hold it there
        inside.set()
        release.wait()
        return original(tenant)

    index._engine.feedback.quarantined = held
    searcher = threading.Thread(target=lambda: results.append(index.search("fox")))
    searcher.start()
    inside.wait()
    closer = threading.Thread(target=index.close)
    closer.start()
    assert closer.is_alive()
    release.set()
    searcher.join()
    closer.join()
    assert _ids(results[0])[0] == "fox#0"


async def test_the_async_twin_answers_as_the_blocking_index(tmp_path: Path) -> None:
    async with await rcpkit.open_async(tmp_path / "idx", create=True, embedder=HASHING) as opened:
        await opened.add(DOCS)
        together = await asyncio.gather(*(opened.search(q, k=2) for q in ("fox", "moon", "grid")))
        assert await opened.delete(["cars"]) == 1
    with rcpkit.open(tmp_path / "idx") as blocking:
        assert _ids(together[0]) == ["fox#0", "cars#0"]
        pinned = int(together[1].index_version)  # §7.7.1: the version before the delete
        assert _ids(blocking.search("moon", k=2, index_version=pinned)) == _ids(together[1])
        assert "cars#0" not in _ids(blocking.search("moon", k=2))


def test_add_paths_indexes_as_rcpkit_index_does(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "rcpkit",
        "index",
        str(SAMPLES),
        "--index",
        str(tmp_path / "cli"),
    ]
    built = subprocess.run(
        [*command, "--embedder", HASHING], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    with rcpkit.open(tmp_path / "lib", create=True, embedder=HASHING) as library:
        run = library.add_paths([SAMPLES])
        assert run.committed and run.added == len(list(SAMPLES.glob("*.md")))
        mine = library.stats()
        found = _ids(library.search("reciprocal rank fusion", k=5))
    with rcpkit.open(tmp_path / "cli") as cli:
        theirs = cli.stats()
        assert _ids(cli.search("reciprocal rank fusion", k=5)) == found
    assert (mine["documents"], mine["chunks"]) == (theirs["documents"], theirs["chunks"])


def _opened_by_url(url: str) -> None:
    """Write, filter and delete through ``url``, then reopen it: the store is the index,
    and keeps its fields."""
    with rcpkit.open(url, embedder=HASHING) as opened:
        opened.add(DOCS)
        assert _ids(opened.search("fox", filter={"team": "zoo"})) == ["fox#0", "cars#0"]
        assert opened.delete(["fox"]) == 1
    with rcpkit.open(url) as again:
        assert _ids(again.search("fox", filter={"team": "zoo"})) == ["cars#0"]


def test_a_postgresql_database_opens_by_its_url(postgres_url: str) -> None:
    _opened_by_url(postgres_url)


@pytest.mark.timeout(900)  # the session's SolrCloud starts (and stops) within it
def test_a_solrcloud_collection_opens_by_its_url(solr_url: str) -> None:
    # Issue 47: open(url) for the database stores, SolrCloud's included (issue 48).
    _opened_by_url(solr_url)
    with rcpkit.open(solr_url) as again:
        assert again.stats()["documents"] == len(DOCS) - 1
