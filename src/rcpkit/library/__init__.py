"""rcpkit in process: open an index, add documents, search it — no server, no subprocess.

>>> import rcpkit
>>> with rcpkit.open("./idx", create=True) as index:
...     index.add([{"id": "a", "text": "Refunds are paid within 14 days.", "meta": {"lang": "en"}}])
...     hits = index.search("how do refunds work", k=5, filter={"lang": "en"})
...     hits[0].id, hits[0].score, hits[0].citation

``rcpkit.open_async`` gives the same index with awaitable methods.
"""

from rcpkit.library._async import AsyncIndex, open_async
from rcpkit.library._errors import LibraryError
from rcpkit.library._index import AddResult, Index, SearchResult, StoredDocument
from rcpkit.library._open import open
from rcpkit.protocol.content import Hit

__all__ = [
    "AddResult",
    "AsyncIndex",
    "Hit",
    "Index",
    "LibraryError",
    "SearchResult",
    "StoredDocument",
    "open",
    "open_async",
]
