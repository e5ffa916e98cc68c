import rcpkit

with rcpkit.open("./idx", create=True) as index:  # SQLite + the bundled MiniLM, in this process
    index.add([
        {"id": "refunds", "text": "Refunds go back to the card within 14 days.", "meta": {"team": "billing"}},
        {"id": "shipping", "text": "Orders ship within 2 working days.", "meta": {"team": "ops"}},
    ])
    index.add_paths(["./docs"])  # what `rcpkit index ./docs` does
    for hit in index.search("how do refunds work", k=3, filter={"team": "billing"}):
        print(hit.id, round(hit.score, 3), hit.citation.source, hit.text)
