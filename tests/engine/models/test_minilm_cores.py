"""The bundled MiniLM embeds on every core it is given, with the vectors of one (issue 51).

``load_minilm(threads=N)`` runs N length-sorted batches at once, each on a
one-thread onnxruntime call; the batches, and so the vectors, are those of a
one-thread embedder.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import numpy as np
import pytest

from rcpkit.engine.models import load_minilm
from rcpkit.engine.models._onnx_session import OnnxTokenEncoder

_WORDS = "river stone garden lantern copper meadow harbor violin thunder maple".split()


def passages(count: int) -> list[str]:
    rng = random.Random(51)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 120))) for _ in range(count)]


class Rendezvous:
    """Holds the first session call until a second one has started, or gives up."""

    def __init__(self) -> None:
        self.second_started = threading.Event()
        self.armed = False  # set after the load: its probe call must not wait for a second
        self.calls = 0
        self.met = False
        self._lock = threading.Lock()

    def arrive(self) -> None:
        if not self.armed:
            return
        with self._lock:
            self.calls += 1
            first = self.calls == 1
        if first:
            # A one-batch-at-a-time embedder never starts a second call while this waits.
            self.met = self.second_started.wait(timeout=30)
        else:
            self.second_started.set()


@pytest.fixture
def rendezvous(monkeypatch: pytest.MonkeyPatch) -> Rendezvous:
    meeting = Rendezvous()
    run = OnnxTokenEncoder.hidden_states

    def observed(self: OnnxTokenEncoder, batch: Any) -> Any:
        meeting.arrive()
        return run(self, batch)

    monkeypatch.setattr(OnnxTokenEncoder, "hidden_states", observed)
    return meeting


@pytest.mark.timeout(300)
def test_two_threads_encode_two_batches_at_once(rendezvous: Rendezvous) -> None:
    embedder = load_minilm(threads=2, batch_size=4)
    rendezvous.armed = True
    embedder.embed(passages(16))
    assert rendezvous.calls == 4
    assert rendezvous.met, "the second batch only started after the first one ended"


@pytest.mark.timeout(300)
def test_vectors_on_two_threads_are_those_of_one() -> None:
    texts = passages(40)
    one = load_minilm(threads=1).embed(texts)
    two = load_minilm(threads=2).embed(texts)
    np.testing.assert_allclose(two, one, atol=1e-6)


@pytest.mark.timeout(300)
def test_token_vectors_on_two_threads_are_those_of_one() -> None:
    texts = passages(40)
    one = load_minilm(threads=1).embed_tokens(texts)
    two = load_minilm(threads=2).embed_tokens(texts)
    assert [matrix.shape for matrix in two] == [matrix.shape for matrix in one]
    for mine, theirs in zip(two, one, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-6)
