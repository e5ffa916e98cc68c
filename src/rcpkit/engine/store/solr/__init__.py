"""A SolrCloud collection as rcpkit's store (issue 48): servers that hold no corpus.

``store`` is :class:`SolrStore` (versions, writes, reads of documents);
``reads`` ranks in Solr (lexical, dense, filters as ``fq``); ``rows`` maps
rcpkit's rows to Solr documents; ``collection`` and ``http`` talk to the
cluster; ``localcloud`` runs a local SolrCloud (``rcpkit solr up``).
"""

from rcpkit.engine.store.solr.store import SolrStore, SolrTenancy, is_solr_url

__all__ = ["SolrStore", "SolrTenancy", "is_solr_url"]
