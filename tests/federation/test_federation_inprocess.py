"""Federation over in-process engines: fan-out, partial failure, loops, deadlines (§16)."""

from __future__ import annotations

import pytest
from federation_support import Engine, connector, registry

from rcpkit.federation import Federation
from rcpkit.protocol import RCPError
from rcpkit.protocol import messages as m
from rcpkit.server import App

DOCS_A = {"a1": "rank fusion merges lists", "a2": "dense vectors"}
DOCS_B = {"b1": "fusion of rank lists", "b2": "sparse lexical rank"}


def _federation(
    engines: dict[str, Engine], specs: list[dict] | None = None, **options
) -> Federation:
    specs = specs if specs is not None else [{"id": name} for name in engines]
    return Federation(registry(specs), connector=connector(engines), **options)


async def test_retrieve_fans_out_to_every_engine_and_tags_each_hit_with_its_origin() -> None:
    engines = {"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B)}
    async with _federation(engines) as federation:
        result = await federation.retrieve("rank fusion", k=3)
    assert set(result.answered) == {"a", "b"} and not result.degraded
    assert {hit.meta["engine"] for hit in result.hits} == {"a", "b"}
    for hit in result.hits:
        assert {"engineRank", "engineScore", "fusedScore"} <= set(hit.meta)
    assert engines["a"].seen[0]["params"].k == 6  # k times the overfetch headroom


async def test_engines_lacking_retrieve_are_skipped_without_noise() -> None:
    rerank_only = App("R", "1")

    @rerank_only.rerank(methods=["colbert"])
    def rerank(params: m.RerankParams) -> m.RerankResult:
        return m.RerankResult(scores=[0.0])

    engines = {"a": Engine("A", DOCS_A)}
    base = connector(engines)

    async def connect(spec):
        if spec.id == "r":
            from rcpkit.client import connect_in_memory

            return await connect_in_memory(rerank_only.server)
        return await base(spec)

    federation = Federation(registry([{"id": "a"}, {"id": "r"}]), connector=connect)
    async with federation:
        result = await federation.retrieve("rank", k=2)
        assert result.answered == ("a",) and result.notes == ()
        assert federation.effective_capabilities >= {"retrieve", "rerank"}
        assert "rerank" not in federation.guaranteed_capabilities


async def test_an_engine_meeting_its_own_deadline_is_noted_with_the_timeout_it_was_given() -> None:
    # Seen in the full suite under load: a demoted engine answered -32014 itself (it
    # honours the deadline it is sent) before the gateway's own timer fired, and the
    # note no longer said which timeout it had been given.
    # The gateway's timeout is long: "late" answers -32014 at once, "fast" need not be fast.
    late = RCPError(-32014, "deadline exceeded")
    engines = {"fast": Engine("F", DOCS_A), "late": Engine("L", DOCS_B, error=late)}
    async with _federation(engines, engine_timeout=20.0) as federation:
        result = await federation.retrieve("rank", k=3)
    assert result.failures[0].engine == "late" and result.failures[0].code == -32014
    assert "(its timeout 20 s)" in result.failures[0].message


async def test_a_slow_engine_is_dropped_at_its_deadline_and_the_result_is_degraded() -> None:
    # "slow" never answers, so only the gateway's timer can end its call; the timer is
    # long enough that an in-memory "fast" answers within it on a loaded machine too.
    engines = {"fast": Engine("F", DOCS_A), "slow": Engine("S", DOCS_B, hangs=True)}
    async with _federation(engines, engine_timeout=5.0) as federation:
        result = await federation.retrieve("rank", k=3)
    assert result.answered == ("fast",)
    assert result.degraded and result.failures[0].engine == "slow"
    assert result.failures[0].code == -32014
    wire = result.to_wire()
    assert wire["_meta"]["degraded"][0]["engine"] == "slow"
    assert any("engine 'slow' failed" in note for note in wire["usage"]["notes"])


async def test_a_malformed_answer_is_that_engines_failure_not_the_querys() -> None:
    engines = {"a": Engine("A", DOCS_A), "bad": Engine("Bad", DOCS_B, malformed=True)}
    async with _federation(engines) as federation:
        result = await federation.retrieve("rank", k=3)
    assert result.answered == ("a",)
    assert [(f.engine, f.code) for f in result.failures] == [("bad", -32603)]


async def test_a_required_engine_failure_fails_the_whole_query_with_its_code() -> None:
    refused = RCPError(-32012, "not for you")
    engines = {"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B, error=refused)}
    specs = [{"id": "a"}, {"id": "b", "required": True}]
    async with _federation(engines, specs) as federation:
        with pytest.raises(RCPError) as caught:
            await federation.retrieve("rank", k=3)
    assert caught.value.code == -32012
    assert "required engine 'b'" in caught.value.message


async def test_a_required_engine_down_at_connect_fails_connect() -> None:
    federation = _federation({}, [{"id": "gone", "required": True}])
    with pytest.raises(RCPError) as caught:
        await federation.connect()
    assert caught.value.code == -32010 and "gone" in caught.value.message


async def test_when_every_engine_fails_the_query_is_backend_unavailable() -> None:
    broken = RCPError(-32603, "boom")
    engines = {"a": Engine("A", DOCS_A, error=broken), "b": Engine("B", DOCS_B, error=broken)}
    async with _federation(engines) as federation:
        with pytest.raises(RCPError) as caught:
            await federation.retrieve("rank", k=3)
    assert caught.value.code == -32010
    assert {entry["engine"] for entry in (caught.value.extra or {})["engines"]} == {"a", "b"}


async def test_an_engine_that_cannot_take_an_option_is_skipped_and_noted() -> None:
    engines = {"d": Engine("D", DOCS_A, modes=["dense"]), "s": Engine("S", DOCS_B)}
    async with _federation(engines) as federation:
        result = await federation.retrieve("rank", k=3, mode="dense")
        assert result.answered == ("d",)
        assert any("engine 's' skipped" in note for note in result.notes)
        with pytest.raises(RCPError) as caught:
            await federation.retrieve("rank", k=3, mode="hybrid")
        assert caught.value.code == -32005  # nobody can: the option is unsupported


async def test_a_filter_goes_only_to_the_engines_that_advertise_its_field() -> None:
    engines = {
        "f": Engine("F", DOCS_A, filter_fields={"lang": "keyword"}),
        "n": Engine("N", DOCS_B),
    }
    async with _federation(engines) as federation:
        clause = {"field": "lang", "op": "eq", "value": "en"}
        result = await federation.retrieve("rank", k=3, filter=clause)
    assert result.answered == ("f",)


async def test_an_originating_client_sends_the_full_hop_budget_and_an_empty_path() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    async with _federation(engines) as federation:
        await federation.retrieve("rank", k=1)
    assert engines["a"].seen[0]["meta"]["federation"] == {"depth": 3, "path": []}


async def test_an_aggregator_decrements_the_depth_and_appends_its_identity() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    async with _federation(engines, identity="gw-1") as federation:
        meta = {"federation": {"depth": 2, "path": ["upstream"]}}
        await federation.retrieve("rank", k=1, meta=meta)
    assert engines["a"].seen[0]["meta"]["federation"] == {"depth": 1, "path": ["upstream", "gw-1"]}


async def test_depth_zero_is_answered_without_forwarding() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    async with _federation(engines, identity="gw-1") as federation:
        result = await federation.retrieve("rank", k=1, meta={"federation": {"depth": 0}})
    assert result.hits == [] and engines["a"].seen == []
    assert "depth exhausted" in result.notes[0]


async def test_an_engine_whose_identity_is_already_in_the_path_is_skipped_as_a_cycle() -> None:
    engines = {
        "a": Engine("A", DOCS_A),
        "loop": Engine("L", DOCS_B, catalog_identity="gw-0"),
    }
    async with _federation(engines, identity="gw-1") as federation:
        meta = {"federation": {"depth": 3, "path": ["gw-0"]}}
        result = await federation.retrieve("rank", k=3, meta=meta)
        assert result.answered == ("a",) and engines["loop"].seen == []
        assert any("federation cycle" in note and "'gw-0'" in note for note in result.notes)


async def test_the_deadline_downstream_is_strictly_smaller_than_the_one_given() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    async with _federation(engines, identity="gw") as federation:
        # A long deadline: this call must answer, however loaded the machine.
        await federation.retrieve("rank", k=1, deadline=600.0)
        with pytest.raises(RCPError) as caught:
            await federation.retrieve("rank", k=1, deadline=0.001)
    assert 0 < engines["a"].seen[0]["meta"]["deadlineMs"] < 600_000
    assert caught.value.code == -32014


async def test_min_score_is_applied_on_the_fused_scale() -> None:
    engines = {"a": Engine("A", DOCS_A), "b": Engine("B", DOCS_B)}
    async with _federation(engines) as federation:
        everything = await federation.retrieve("rank fusion", k=5)
        threshold = everything.hits[0].score
        top = await federation.retrieve("rank fusion", k=5, min_score=threshold)
    assert "minScore" not in str(engines["a"].seen[-1]["params"])
    assert engines["a"].seen[-1]["params"].min_score is None
    assert top.hits and all(hit.score >= threshold for hit in top.hits)


async def test_the_catalog_lists_identity_capabilities_and_endpoints() -> None:
    engines = {"a": Engine("A", DOCS_A)}
    async with _federation(engines, [{"id": "a"}, {"id": "down"}]) as federation:
        (entry,) = federation.catalog()
        assert entry.id == "a" and entry.server.name == "A"
        assert "retrieve" in entry.capabilities
        assert entry.endpoint == {"transport": "stdio", "command": ["unused"]}
        assert federation.catalog(endpoints=False)[0].endpoint is None


async def test_an_engine_down_at_start_is_reconnected_on_a_later_query() -> None:
    engines: dict[str, Engine] = {"a": Engine("A", DOCS_A)}
    federation = _federation(engines, [{"id": "a"}, {"id": "late"}], reconnect_after=0.0)
    failures = await federation.connect()
    assert [failure.engine for failure in failures] == ["late"]
    engines["late"] = Engine("Late", DOCS_B)
    result = await federation.retrieve("rank", k=3)
    assert set(result.answered) == {"a", "late"}
    await federation.close()


async def test_graph_fans_out_to_the_engines_offering_the_op() -> None:
    graph_app = App("G", "1")

    @graph_app.graph(ops=["local", "global"])
    def graph(params: m.GraphParams) -> m.GraphResult:
        if params.op == "global":
            return m.GraphResult(summary="all about ranks")
        return m.GraphResult(hits=[m.Hit(id="n1", score=1.0)], followups=["why?"])

    from rcpkit.client import connect_in_memory

    async def connect(spec):
        return await connect_in_memory(graph_app.server)

    federation = Federation(registry([{"id": "g1"}, {"id": "g2"}]), connector=connect)
    async with federation:
        local = await federation.graph("local", query="q", k=5)
        assert [hit.id for hit in local.hits] == ["n1"]
        assert local.hits[0].meta["engines"] == ["g1", "g2"]
        assert local.graph["followups"] == ["why?"]
        overview = await federation.graph("global", query="q")
        assert overview.graph["summary"].count("all about ranks") == 2
