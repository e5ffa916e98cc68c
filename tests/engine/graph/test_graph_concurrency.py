from __future__ import annotations

import threading
from pathlib import Path

from graph_support import CORPUS, make_graph


def test_queries_on_other_threads_see_a_whole_version_during_writes(tmp_path: Path) -> None:
    graph = make_graph(tmp_path, CORPUS[:6])
    errors: list[BaseException] = []
    seen: list[int] = []
    stop = threading.Event()

    def query() -> None:
        try:
            while not stop.is_set():
                hits = graph.local("Roald Amundsen", k=5, unit="node").hits
                assert hits and hits[0].id == "roald amundsen"
                seen.append(len(graph.communities(None, 0, 100).communities))
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=query) for _ in range(2)]
    for thread in threads:
        thread.start()
    for key, chunk_id, text in CORPUS[6:]:
        graph.add_chunks([(key, chunk_id, text)])
    graph.remove_chunks([16])
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors and seen
    assert not any(thread.is_alive() for thread in threads)
    assert "irene joliot-curie" not in graph.snapshot().index_of
