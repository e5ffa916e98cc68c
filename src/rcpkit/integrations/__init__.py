"""Framework integrations: LangChain, LlamaIndex and Haystack over any RCP server.

Each framework's module imports its framework and lives behind its extra
(``rcpkit[langchain]``, ``rcpkit[llamaindex]``, ``rcpkit[haystack]``); this
package itself imports none of them.

>>> from rcpkit.integrations import Connection
>>> connection = Connection.stdio(["rcpkit", "serve", "--index", "./index"])
>>> from rcpkit.integrations.langchain import RCPRetriever
>>> RCPRetriever(connection=connection, k=3).invoke("reciprocal rank fusion")
"""

from rcpkit.integrations._connect import Connection, Source
from rcpkit.integrations._retrieval import Passthrough, hit_metadata

__all__ = ["Connection", "Passthrough", "Source", "hit_metadata"]
