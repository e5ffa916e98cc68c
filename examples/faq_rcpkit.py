from rcpkit import App

FAQ = {
    "refunds": "Refunds go back to the original card within 14 days of a return.",
    "shipping": "Orders ship within 2 working days and tracking arrives by email.",
    "warranty": "Every device carries a two-year warranty against defects.",
    "returns": "Return any item within 30 days in its original packaging.",
}
app = App("faq", "1.0")


@app.retrieve()
def search(query: str, k: int = 3):
    """Rank FAQ answers by how many query words they contain."""
    words = set(query.lower().split())
    scored = [(doc, len(words & set(text.lower().split())), text) for doc, text in FAQ.items()]
    return sorted((hit for hit in scored if hit[1]), key=lambda hit: -hit[1])[:k]


app.run_stdio()
