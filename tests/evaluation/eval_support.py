"""A small BEIR-layout collection written to disk: 24 documents on four topics, 6 queries."""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = {
    "wing": ["wing lift at high angle of attack", "swept wing stall and lift loss",
             "lift distribution over a tapered wing", "wing flutter and aeroelastic lift"],
    "heat": ["heat transfer in a hypersonic boundary layer", "wall heat flux in laminar flow",
             "heat transfer to a blunt nose cone", "convective heat transfer at re-entry"],
    "shell": ["buckling of thin cylindrical shells", "shell buckling under axial compression",
              "conical shell stability and buckling", "buckling loads of stiffened shells"],
    "shock": ["shock wave and boundary layer interaction", "oblique shock reflection off a wall",
              "shock standoff distance ahead of a sphere", "normal shock in a nozzle"],
}  # fmt: skip
QUERIES = {
    "q1": ("how does a wing lose lift at stall", "wing"),
    "q2": ("heat transfer in hypersonic flow", "heat"),
    "q3": ("buckling of cylindrical shells", "shell"),
    "q4": ("shock wave interaction with a boundary layer", "shock"),
    "q5": ("lift distribution of wings", "wing"),
    "q6": ("stability of conical shells", "shell"),
}


def write_dataset(folder: Path) -> Path:
    """The collection under ``folder``; every document of a query's topic is relevant."""
    (folder / "qrels").mkdir(parents=True)
    rows, qrels = [], ["query-id\tcorpus-id\tscore"]
    for topic, texts in TOPICS.items():
        for number, text in enumerate(texts):
            rows.append({"_id": f"{topic}{number}", "title": text.split(" ")[0], "text": text})
    for filler in range(8):  # distractors no query asks for
        rows.append({"_id": f"other{filler}", "title": "", "text": f"unrelated note {filler}"})
    rows.append({"_id": "empty", "title": "", "text": ""})
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    queries = [{"_id": qid, "text": text} for qid, (text, _) in QUERIES.items()]
    queries.append({"_id": "unjudged", "text": "a query nobody judged"})
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    for qid, (_, topic) in QUERIES.items():
        qrels += [f"{qid}\t{topic}{n}\t{2 if n == 0 else 1}" for n in range(4)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    return folder
