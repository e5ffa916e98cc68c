"""The embedded store's layout: its tables, and the number ``PRAGMA user_version`` holds."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_key INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, doc_id TEXT NOT NULL,
    title TEXT, uri TEXT, source TEXT NOT NULL,
    modality TEXT NOT NULL, meta TEXT NOT NULL, content_hash TEXT NOT NULL,
    text TEXT NOT NULL, pages TEXT, origin TEXT NOT NULL,
    added INTEGER NOT NULL, removed INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS live_documents ON documents (tenant, doc_id)
    WHERE removed IS NULL;
CREATE TABLE IF NOT EXISTS chunks (
    key INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_key INTEGER NOT NULL REFERENCES documents(doc_key), tenant TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL, start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER,
    text TEXT NOT NULL, context TEXT, filter_meta TEXT NOT NULL, vector BLOB NOT NULL,
    added INTEGER NOT NULL, removed INTEGER
);
CREATE INDEX IF NOT EXISTS live_chunks ON chunks (tenant, doc_id) WHERE removed IS NULL;
CREATE INDEX IF NOT EXISTS removed_chunks ON chunks (removed) WHERE removed IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts
    USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS splade (
    key INTEGER NOT NULL, term INTEGER NOT NULL, weight REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS splade_terms ON splade (term, key);
-- created: when the key was recorded (Unix seconds), so keys past their retention go.
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY, result TEXT NOT NULL, created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created);
-- WITHOUT ROWID: the rows are the (tenant, word) key's b-tree, not a second copy of the
-- words beside a rowid table (31 B a chunk at 100k). An older file keeps its table; it
-- reads and writes the same, so the layout's number stays.
CREATE TABLE IF NOT EXISTS vocabulary (
    tenant TEXT NOT NULL, word TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY (tenant, word)
) WITHOUT ROWID;
"""

# PRAGMA user_version of the layout below. 5: a document whose only chunk holds its
# whole text stores '' and is read from the chunk (issue 51.5), so an older rcpkit,
# which would show it empty, refuses the file instead.
SCHEMA_VERSION = 5
