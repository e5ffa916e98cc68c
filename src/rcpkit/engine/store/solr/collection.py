"""One Solr collection as the store reads and writes it: select, paging, realtime get, update.

Solr's failures become the protocol's: no node reachable, or a node refusing
because the cluster is failing over, is ``-32010`` retryable (§12); a version
conflict between two writers too (the retry applies the batch again, §7.10).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from numbers import Integral
from typing import Any, TypeVar

from rcpkit.engine.store.partial import LeftOut, leave_out, tolerated
from rcpkit.engine.store.solr.http import SolrError, SolrHttp, SolrUnavailable
from rcpkit.protocol.errors import ErrorCode, RCPError

__all__ = ["Collection", "parse_url", "terms_filter"]

T = TypeVar("T")
_PAGE = 1000


def parse_url(url: str) -> tuple[list[str], str]:
    """``solr://HOST:PORT[,HOST:PORT…]/solr/COLLECTION`` → (node base URLs, collection)."""
    parsed = urllib.parse.urlsplit(url)
    path = parsed.path.strip("/").split("/")
    if parsed.scheme != "solr" or not parsed.netloc or len(path) != 2 or not path[1]:
        raise ValueError(f"--store must be solr://HOST:PORT/solr/COLLECTION, not {url!r}")
    hosts = parsed.netloc.split(",")
    return [f"http://{host}/{path[0]}" for host in hosts], path[1]


def terms_filter(field: str, values: Sequence[object]) -> str:
    """An ``fq`` matching ``field`` against any of ``values``, each exactly.

    Numbers go through Solr's terms parser; strings are quoted terms (the terms
    parser splits on a separator a document id may hold).
    """
    if not values:
        return "(-*:*)"
    if all(isinstance(value, Integral) for value in values):
        return f"{{!terms f={field}}}" + ",".join(str(int(value)) for value in values)  # type: ignore[call-overload]
    quoted = ('"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return f"{field}:(" + " OR ".join(quoted) + ")"


def _record_left_out(info: dict[str, Any], dead: Callable[[], list[str]]) -> None:
    """Each shard a tolerant search went on without, named as SolrCloud names it.

    A shard answered for by a replica that failed carries that replica's address
    (``…_shard2_replica_n1``). A shard with no live replica at all has no address:
    Solr calls it ``unknown_shard_1``, ``unknown_shard_2``…, counting such shards,
    so the name says nothing of which one it is; those are named from the
    cluster's state instead (``dead``: the shards with no active replica on a
    live node).
    """
    unnamed: list[tuple[str, str]] = []  # (Solr's name, its error) of address-less shards
    for address, shard in info.items():
        if not isinstance(shard, dict) or "error" not in shard:
            continue
        message = str(shard.get("error") or "unreachable").splitlines()[0]
        named = _SHARD.search(address)
        if named:
            leave_out(LeftOut(named.group(1), int(ErrorCode.BACKEND_UNAVAILABLE), message))
        else:
            unnamed.append((address, message))
    if unnamed:
        try:
            parts = dead()
        except (SolrError, SolrUnavailable):
            parts = []
        # Solr's own names when the state cannot tell (never silent).
        for part in parts or [address for address, _ in unnamed]:
            leave_out(LeftOut(part, int(ErrorCode.BACKEND_UNAVAILABLE), unnamed[0][1]))


_SHARD = re.compile(r"_(shard\d+)_replica")


@contextmanager
def _mapped() -> Iterator[None]:
    try:
        yield
    except SolrUnavailable as error:
        raise RCPError(ErrorCode.BACKEND_UNAVAILABLE, str(error), retryable=True) from None
    except SolrError as error:
        # A 5xx is the cluster's own failure (a leader lost, a replica recovering): the
        # retry may land once it has failed over. A 409 is another writer's version.
        retryable = error.status == 409 or error.status >= 500
        raise RCPError(
            ErrorCode.BACKEND_UNAVAILABLE, f"Solr refused: {error.message}", retryable=retryable
        ) from None


class Collection:
    """Requests to one collection through any live node."""

    def __init__(self, http: SolrHttp, name: str) -> None:
        self.http = http
        self.name = name

    def select(self, body: dict[str, Any], strict: bool = False, **params: Any) -> dict[str, Any]:
        """A search; inside a retrieve (``store.partial``) one that tolerates a dead shard.

        A shard with no live replica is then left out (Solr's ``shards.tolerant``)
        and named in the result (``_meta.degraded``); elsewhere, or ``strict``, it
        fails the read.
        """
        tolerant = tolerated() and not strict
        if tolerant:
            params = {**params, "shards.tolerant": "true", "shards.info": "true"}
        with _mapped():
            answer = self.http.post_json(f"/{self.name}/select", body, **params)
        if tolerant and answer.get("responseHeader", {}).get("partialResults"):
            _record_left_out(answer.get("shards.info", {}), self.dead_shards)
        return answer

    def dead_shards(self) -> list[str]:
        """The shards with no active replica on a live node, per the cluster's state."""
        cloud = self.http.admin("CLUSTERSTATUS", collection=self.name)["cluster"]
        live = set(cloud.get("live_nodes", []))
        shards = cloud["collections"][self.name]["shards"]
        return sorted(
            name
            for name, shard in shards.items()
            if not any(
                replica.get("state") == "active" and replica.get("node_name") in live
                for replica in shard.get("replicas", {}).values()
            )
        )

    def docs(
        self, body: dict[str, Any], strict: bool = False, **params: Any
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.select(body, strict, **params)["response"]["docs"]
        return found

    def count(self, filters: Sequence[str], query: str = "*:*") -> int:
        answer = self.select({"query": query, "filter": list(filters), "limit": 0})
        return int(answer["response"]["numFound"])

    def each(self, filters: Sequence[str], fields: str, sort: str) -> Iterator[dict[str, Any]]:
        """Every matching document, paged with a cursor (``sort`` must end on ``id``)."""
        mark = "*"
        while True:
            body = {"query": "*:*", "filter": list(filters), "fields": fields,
                    "limit": _PAGE, "sort": sort}  # fmt: skip
            answer = self.select(body, cursorMark=mark)
            yield from answer["response"]["docs"]
            following = answer.get("nextCursorMark", mark)
            if following == mark:
                return
            mark = following

    def get(
        self, ids: Sequence[str], fields: str = "*", route: str | None = None
    ) -> list[dict[str, Any]]:
        """Realtime get: the latest written version of each id, committed or not.

        ``route``: the ids' routing prefix (``prefix!``). Without it Solr asks every
        shard to have a live replica, even those that cannot hold the ids.
        """
        if not ids:
            return []
        routed = {"_route_": route} if route else {}
        with _mapped():
            # One `id` parameter each: `ids=` splits on commas, which an id may hold.
            answer = self.http.get(f"/{self.name}/get", id=list(ids), fl=fields, **routed)
        if "doc" in answer:  # one id asked: Solr answers with the document alone
            return [answer["doc"]] if answer["doc"] else []
        found: list[dict[str, Any]] = answer.get("response", {}).get("docs", [])
        return found

    def update(self, body: Any, commit: bool = False) -> None:
        """An update request; ``commit``: answered once what it wrote is searchable.

        Durable without a hard commit: every replica appends the request to its
        update log and fsyncs it before the leader answers (``syncLevel`` FSYNC in
        the configset), and a node that crashes replays its log when it starts.
        The commit is a soft one (a new searcher, no index fsync): it makes the
        rows visible; the configset's ``autoCommit`` hard-commits in the background
        to keep the logs short. The hard commit per request cost as much as the
        update itself (issue 48: 1,000 chunks, 0.8-1.8 s a commit).
        """
        params = {"softCommit": "true", "waitSearcher": "true"} if commit else {}
        with _mapped():
            self.http.post_json(f"/{self.name}/update", body, **params)

    def guarded(self, work: Callable[[], T]) -> T:
        with _mapped():
            return work()
