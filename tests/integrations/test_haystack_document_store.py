"""Haystack's own DocumentStore test mixins against RCPDocumentStore over a real rcpkit server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("haystack")

from haystack import Document
from haystack.document_stores.types import DuplicatePolicy
from haystack.testing.document_store import (
    CountDocumentsByFilterTest,
    CountDocumentsTest,
    DeleteAllTest,
    DeleteDocumentsTest,
    FilterDocumentsTest,
    WriteDocumentsTest,
)
from integrations_support import http_server

from rcpkit.integrations.haystack import RCPDocumentStore


@pytest.fixture(scope="module")
def store_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_server(tmp_path_factory.mktemp("index")) as url:
        yield url


@pytest.fixture
def document_store(store_url: str) -> Iterator[RCPDocumentStore]:
    store = RCPDocumentStore(url=store_url)
    store.delete_all_documents()  # one server per module: each test starts empty
    yield store
    store.connection.close()


# The engine advertises the filter fields path, folders, ext, mtime, lang, modality, tag,
# year and date (§8: a server filters only on what it advertises). Haystack's filterable
# documents filter on `number`, `name`, `page` and `chapter` (and the count tests on
# `category`): the server refuses them with -32602, raised as FilterError, so those tests
# cannot pass against this engine. Every other test of these mixins runs (the date ones
# use the advertised `date` field).
_UNADVERTISED = "filters on a field the engine does not advertise (§8)"
_FILTERABLE = (  # meta.number / meta.name / meta.page / meta.chapter
    "test_comparison_equal",
    "test_comparison_equal_with_none",
    "test_comparison_not_equal",
    "test_comparison_not_equal_with_none",
    "test_comparison_greater_than",
    "test_comparison_greater_than_with_none",
    "test_comparison_greater_than_equal",
    "test_comparison_greater_than_equal_with_none",
    "test_comparison_less_than",
    "test_comparison_less_than_with_none",
    "test_comparison_less_than_equal",
    "test_comparison_less_than_equal_with_none",
    "test_comparison_in",
    "test_comparison_not_in",
    "test_and_operator",
    "test_or_operator",
    "test_not_operator",
)
_BY_CATEGORY = (  # CountDocumentsByFilterTest filters on meta.category throughout
    "test_count_documents_by_filter_simple",
    "test_count_documents_by_filter_compound",
    "test_count_documents_by_filter_no_matches",
    "test_count_documents_by_filter_empty_collection",
)
_NOT_APPLICABLE = dict.fromkeys((*_FILTERABLE, *_BY_CATEGORY), _UNADVERTISED)


class TestRCPDocumentStore(
    CountDocumentsTest,
    DeleteDocumentsTest,
    WriteDocumentsTest,
    FilterDocumentsTest,
    DeleteAllTest,
    CountDocumentsByFilterTest,
):
    @pytest.fixture(autouse=True)
    def _not_applicable(self, request: pytest.FixtureRequest) -> None:
        reason = _NOT_APPLICABLE.get(request.node.originalname)
        if reason is not None:
            pytest.skip(reason)

    @staticmethod
    def assert_documents_are_equal(received: list[Document], expected: list[Document]) -> None:
        # The server embeds text itself: a Document's own embedding is not stored (the
        # vectors a caller computed belong to a model the server may not share).
        def key(document: Document) -> tuple[str, str | None, dict[str, object]]:
            return document.id, document.content, document.meta

        assert sorted(map(key, received), key=str) == sorted(map(key, expected), key=str)

    def test_write_documents(self, document_store: RCPDocumentStore) -> None:
        # Without a policy the store fails on a duplicate, as the in-memory store does.
        doc = Document(content="test doc")
        assert document_store.write_documents([doc]) == 1
        with pytest.raises(Exception, match="already exists"):
            document_store.write_documents([doc])
        assert document_store.write_documents([doc], policy=DuplicatePolicy.OVERWRITE) == 1
        self.assert_documents_are_equal(document_store.filter_documents(), [doc])


def test_filters_on_advertised_fields_select_the_written_documents(
    document_store: RCPDocumentStore,
) -> None:
    documents = [
        Document(content=f"note {number}", meta={"year": 2020 + number, "lang": lang})
        for number, lang in enumerate(["en", "de", "en", "de"])
    ]
    document_store.write_documents(documents)
    english = {"field": "meta.lang", "operator": "==", "value": "en"}
    recent = {"field": "meta.year", "operator": ">=", "value": 2022}
    both = {"operator": "AND", "conditions": [english, recent]}
    assert [doc.meta["year"] for doc in document_store.filter_documents(both)] == [2022]
    either = {"operator": "OR", "conditions": [english, recent]}
    assert document_store.count_documents_by_filter(either) == 3
    assert document_store.delete_by_filter({"operator": "NOT", "conditions": [english]}) == 2
    assert document_store.count_documents() == 2


def test_the_store_round_trips_through_to_dict(tmp_path: Path) -> None:
    store = RCPDocumentStore(command=["rcpkit", "serve", "--index", str(tmp_path)])
    again = RCPDocumentStore.from_dict(store.to_dict())
    assert again.connection.source == store.connection.source


# Issue 52.1: `delete_by_filter({})` deleted every document the token could see. The
# reference store, Haystack's InMemoryDocumentStore, refuses a filter with no `operator`
# (FilterError; `None` is a TypeError there): an empty filter never means "everything".
# `delete_all_documents` is the call that does.
@pytest.mark.parametrize("filters", [{}, None], ids=["empty", "none"])
def test_delete_by_filter_without_a_filter_deletes_nothing_as_the_in_memory_store(
    document_store: RCPDocumentStore, filters: dict[str, object] | None
) -> None:
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from haystack.errors import FilterError

    reference = InMemoryDocumentStore()
    documents = [Document(content=f"note {number}", meta={"lang": "en"}) for number in range(3)]
    for store in (reference, document_store):
        store.write_documents(documents)
    with pytest.raises((FilterError, TypeError)):
        reference.delete_by_filter(filters)  # type: ignore[arg-type]
    with pytest.raises(FilterError, match="delete_all_documents"):
        document_store.delete_by_filter(filters)  # type: ignore[arg-type]
    assert document_store.count_documents() == reference.count_documents() == 3


def test_a_logical_filter_without_conditions_deletes_nothing(
    document_store: RCPDocumentStore,
) -> None:
    # InMemoryDocumentStore deletes nothing for OR/NOT of no conditions and *everything*
    # for AND of none; §8 has no empty `and`, so this store refuses all three.
    from haystack.errors import FilterError

    document_store.write_documents([Document(content="kept")])
    for operator in ("AND", "OR", "NOT"):
        with pytest.raises(FilterError, match="at least one condition"):
            document_store.delete_by_filter({"operator": operator, "conditions": []})
    assert document_store.count_documents() == 1


def test_a_document_another_client_indexed_chunked_lists_and_round_trips_whole(
    document_store: RCPDocumentStore,
) -> None:
    # It listed as one of its chunks (1,119 of 22,289 characters), so writing the listed
    # Document back (OVERWRITE, as a meta update does) cut the document to that chunk.
    text = " ".join(f"Sentence {number} is about topic {number % 7}." for number in range(600))
    document_store.connection.client.index_add(
        [{"id": "long", "text": text, "meta": {"lang": "en"}}]  # chunked by the server
    )
    (listed,) = document_store.filter_documents()
    assert (listed.id, listed.content, listed.meta["lang"]) == ("long", text, "en")
    listed.meta["year"] = 2026
    document_store.write_documents([listed], policy=DuplicatePolicy.OVERWRITE)
    (again,) = document_store.filter_documents()
    assert (again.content, again.meta["year"]) == (text, 2026)


def test_a_chunked_document_lists_whole_even_where_its_chunks_leave_gaps(
    document_store: RCPDocumentStore,
) -> None:
    # The server lists whole documents (§7.7.2 unit "document"): nothing is stitched from
    # chunks, so the blank lines no chunk holds are kept, not refused as a gap.
    text = "\n\n\n" + "\n\n\n".join(f"Part {n}. " + "Words of the part. " * 40 for n in range(6))
    document_store.connection.client.index_add([{"id": "gappy", "text": text}])
    (listed,) = document_store.filter_documents()
    assert (listed.id, listed.content) == ("gappy", text)


class TestRCPDocumentStoreInProcess(TestRCPDocumentStore):
    """The same mixins in process (``index=``): every metadata key is filterable there
    (typed at first sight), so the filter tests skipped over a server run too."""

    @pytest.fixture
    def document_store(self, tmp_path: Path) -> Iterator[RCPDocumentStore]:
        import rcpkit

        with rcpkit.open(tmp_path / "index", create=True, embedder="hashing:64") as index:
            yield RCPDocumentStore(index=index)

    @pytest.fixture(autouse=True)
    def _not_applicable(self, request: pytest.FixtureRequest) -> None:
        reason = _NOT_IN_PROCESS.get(request.node.originalname)
        if reason is not None:
            pytest.skip(reason)


# In process, a key is declared when a document first brings it: on an empty index
# `meta.category` is still unknown (§8 -32602, FilterError). `>`/`<` with None are
# refused by this integration's filter translation in both modes (a FilterError).
_NOT_IN_PROCESS = {
    "test_count_documents_by_filter_empty_collection": "no document has brought the key yet",
    **dict.fromkeys(
        (
            "test_comparison_greater_than_with_none",
            "test_comparison_greater_than_equal_with_none",
            "test_comparison_less_than_with_none",
            "test_comparison_less_than_equal_with_none",
        ),
        "an ordered comparison with None is a FilterError here",
    ),
}
