"""index/add hands MiniLM its whole request, length-sorted once, and still stops on a cancel.

Issue 51 item 3: index/add used to embed 64 texts a call (its cancellation
checkpoints), each call sorted and padded on its own; a 200-chunk add then ran
other batches than one embed of the same 200 texts. Observed at the model: the
padded batches onnxruntime is given.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from engine_support import Calls, make_engine, serving

from rcpkit.engine.engine import Engine
from rcpkit.engine.models import TransformerEmbedder
from rcpkit.engine.models._onnx_session import OnnxTokenEncoder

_WORDS = "river stone garden lantern copper meadow harbor violin thunder maple".split()


def passages(count: int) -> list[str]:
    """Texts of 5 to 120 words (one chunk each): lengths differ, so sorting matters."""
    rng = random.Random(51)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 120))) for _ in range(count)]


class ModelBatches:
    """The (rows, width) of every batch onnxruntime is given, and a way to hold the first."""

    def __init__(self) -> None:
        self.shapes: list[tuple[int, int]] = []
        self.hold_first = False
        self.first_started = threading.Event()
        self.release = threading.Event()
        self.add_ended = threading.Event()  # an embed call of the big add returned or raised
        self._lock = threading.Lock()

    def seen(self, batch: Any) -> None:
        with self._lock:
            self.shapes.append(batch.input_ids.shape)
            first = len(self.shapes) == 1
        if first and self.hold_first:
            self.first_started.set()
            assert self.release.wait(timeout=120), "the test never released the first batch"


@pytest.fixture
def model_batches(monkeypatch: pytest.MonkeyPatch) -> ModelBatches:
    batches = ModelBatches()
    run = OnnxTokenEncoder.hidden_states

    def observed(self: OnnxTokenEncoder, batch: Any) -> Any:
        batches.seen(batch)
        return run(self, batch)

    embed = TransformerEmbedder.embed

    def watched(self: TransformerEmbedder, texts: Any, *args: Any, **options: Any) -> Any:
        try:
            return embed(self, texts, *args, **options)
        finally:
            if len(texts) > 1:  # not the one-text add that follows it
                batches.add_ended.set()

    monkeypatch.setattr(OnnxTokenEncoder, "hidden_states", observed)
    monkeypatch.setattr(TransformerEmbedder, "embed", watched)
    return batches


@pytest.fixture
def minilm_engine(tmp_path: Path) -> Iterator[Engine]:
    engine = make_engine(tmp_path / "index", "minilm", threads=2)
    engine.embedder()  # loaded (its probe batch run) before anything is recorded
    yield engine
    engine.close()


@pytest.mark.timeout(600)
async def test_an_add_of_200_chunks_runs_the_batches_of_one_embed_of_its_texts(
    minilm_engine: Engine, model_batches: ModelBatches
) -> None:
    texts = passages(200)
    documents = [{"id": f"d{number:03d}", "text": text} for number, text in enumerate(texts)]
    async with serving(minilm_engine) as peer:
        added = await Calls(peer).result("index/add", {"documents": documents})
    assert added["chunks"] == 200
    during_add = list(model_batches.shapes)
    model_batches.shapes.clear()
    expected = minilm_engine.embedder().embed(texts)
    # Sorted by length once over the request: no batch padded wider than one embed pads it.
    assert sorted(during_add) == sorted(model_batches.shapes)
    _, stored, *_ = minilm_engine.store.vectors()
    np.testing.assert_array_equal(stored, expected)  # not a bit changed


@pytest.mark.timeout(600)
async def test_a_cancel_stops_an_add_between_model_batches_and_writes_nothing(
    minilm_engine: Engine, model_batches: ModelBatches
) -> None:
    documents = [
        {"id": f"d{number:03d}", "text": text} for number, text in enumerate(passages(200))
    ]
    model_batches.hold_first = True
    async with serving(minilm_engine) as peer:
        peer.send(
            {"jsonrpc": "2.0", "id": 1, "method": "index/add", "params": {"documents": documents}}
        )
        assert await asyncio.to_thread(model_batches.first_started.wait, 120)
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancel", "params": {"id": 1}})
        cancelled = await peer.recv(timeout=60)
        model_batches.release.set()
        assert await asyncio.to_thread(model_batches.add_ended.wait, 120)
        call = Calls(peer)
        await call.result("index/add", {"documents": [{"id": "later", "text": "later"}]})
    assert cancelled["id"] == 1 and cancelled["error"]["code"] == -32006
    # The batches queued when the cancel came may run; not the rest of the 13 (+ the later add's).
    assert len(model_batches.shapes) <= 2 * 2 + 1
    assert [row[0] for row in minilm_engine.store.live_documents()] == ["later"]
