"""Issue 33: `rerank` is advertised by default and scores with the engine's own hybrid scorer.

Through the client over stdio against `rcpkit serve` (the hashing embedder), a
small collection loaded as outside judges load one (``index/add``, the title
as the first line of ``text`` and in ``meta.title``): a plain `rerank` with no
method is answered (it was -32003, not advertised), its scores are aligned
with the passages sent (§7.6), and it ranks the engine's own candidates about
as retrieve did. That reranking the engine's candidates is at least as good
as its first stage on real dev halves is the floor test's
(tests/evaluation/test_eval_floor.py), with the real model.
"""

from __future__ import annotations

import sys
from pathlib import Path

from eval_support import write_dataset

from rcpkit.client import Client
from rcpkit.evaluation.dataset import load_dataset
from rcpkit.evaluation.harness import as_added
from rcpkit.evaluation.metrics import ranked_run, score_run


def _serve(index: Path) -> list[str]:
    return [sys.executable, "-m", "rcpkit", "serve", "--stdio", "--engine", "index",
            "--index", str(index), "--embedder", "hashing:64", "--create"]  # fmt: skip


async def test_a_plain_rerank_is_the_hybrid_scorer_and_never_worse_than_retrieve(
    tmp_path: Path,
) -> None:
    dataset = load_dataset(write_dataset(tmp_path / "data"))
    async with await Client.connect_stdio(_serve(tmp_path / "idx"), connect_timeout=60) as client:
        rerank = client.raw_capabilities.get("rerank")
        assert isinstance(rerank, dict) and rerank["methods"] == ["cross-encoder"]
        added = [as_added(d, "meta-title") for d in dataset.corpus if not d.empty]
        await client.index_add(added)
        first: dict[str, list[str]] = {}
        reranked: dict[str, list[str]] = {}
        for query_id, query in dataset.queries.items():
            found = await client.retrieve(query, k=12, unit="document")
            ids = [str(hit.id) for hit in found.hits]
            texts = [hit.text or "" for hit in found.hits]
            result = await client.rerank(query, texts)  # no method: what a client sends
            assert len(result.scores) == len(texts)
            assert result.order == sorted(range(len(texts)), key=lambda i: -result.scores[i])
            first[query_id] = ids
            reranked[query_id] = [ids[i] for i in result.order]
            # Aligned with the passages: the same passages shuffled get the same scores.
            shuffled = await client.rerank(query, texts[::-1])
            assert shuffled.scores[::-1] == result.scores
        # A stranger's text the index never saw is scored too.
        other = await client.rerank("wing lift", ["lift of a swept wing", "unrelated note"])
        assert other.scores[0] > other.scores[1]
    before = score_run(dataset.qrels, ranked_run(first))
    after = score_run(dataset.qrels, ranked_run(reranked))
    # The rerank sees one field (no weighted title), so it is close, not equal, here.
    assert after["nDCG@10"] >= before["nDCG@10"] - 0.05, (before, after)
    assert sum(first[q][0] == reranked[q][0] for q in first) >= len(first) - 1
