-- rcpkit on PostgreSQL, layout 1: the system of record shared by every server process.
-- Rows are never updated in place but retired (`removed = version`), so any process can
-- serve any retained version (§7.7.1); `versions` is the one row commits serialize on.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL);

CREATE TABLE versions (
    id int PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL,  -- the last committed version; strictly increasing
    floor bigint NOT NULL     -- the oldest version still servable (garbage collection)
);
INSERT INTO versions (id, version, floor) VALUES (1, 0, 0);

CREATE TABLE documents (
    doc_key bigserial PRIMARY KEY,
    tenant text NOT NULL,
    doc_id text NOT NULL,
    title text,
    uri text,
    source text NOT NULL,
    modality text NOT NULL,
    meta jsonb NOT NULL,
    content_hash text NOT NULL,
    text text NOT NULL,
    pages jsonb,
    origin text NOT NULL,
    added bigint NOT NULL,
    removed bigint
);
-- At most one live copy of an id per tenant (§7.10 upsert, §15.6 tenants).
CREATE UNIQUE INDEX live_documents ON documents (tenant, doc_id) WHERE removed IS NULL;
CREATE INDEX removed_documents ON documents (removed) WHERE removed IS NOT NULL;

CREATE TABLE chunks (
    key bigserial PRIMARY KEY,
    doc_key bigint NOT NULL REFERENCES documents (doc_key),
    tenant text NOT NULL,
    doc_id text NOT NULL,
    idx int NOT NULL,
    start int NOT NULL,
    "end" int NOT NULL,
    page int,
    text text NOT NULL,
    context text,
    filter_meta jsonb NOT NULL,
    -- Typed vector(<dimension>) and HNSW-indexed once the embedder is known.
    embedding vector NOT NULL,
    length int NOT NULL,  -- BM25 |D|: tokens of title and body
    added bigint NOT NULL,
    removed bigint
);
CREATE INDEX live_chunks ON chunks (tenant, doc_id) WHERE removed IS NULL;
CREATE INDEX removed_chunks ON chunks (removed) WHERE removed IS NOT NULL;
CREATE INDEX chunks_doc_key ON chunks (doc_key);
-- §8 filters: containment (eq, contains on keywords) and key presence (exists).
CREATE INDEX chunks_filter_meta ON chunks USING gin (filter_meta);

-- BM25 (FTS5's bm25() over columns title and body): per-chunk term frequencies. The
-- chunk's tenant, length and visibility are repeated here so that an unfiltered BM25
-- read never joins `chunks` (`removed` is set with the chunk's, in the same commit).
CREATE TABLE postings (
    term text NOT NULL,
    key bigint NOT NULL,
    tenant text NOT NULL,
    title_tf int NOT NULL,
    body_tf int NOT NULL,
    length int NOT NULL,
    added bigint NOT NULL,
    removed bigint,
    PRIMARY KEY (term, key)
);
CREATE INDEX postings_key ON postings (key);
-- Live chunk frequency of each term per tenant, maintained by every commit.
CREATE TABLE term_stats (
    tenant text NOT NULL,
    term text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (tenant, term)
);
-- Live chunk count and token total per tenant as of each version that changed them.
CREATE TABLE corpus_stats (
    tenant text NOT NULL,
    version bigint NOT NULL,
    chunks bigint NOT NULL,
    tokens bigint NOT NULL,
    PRIMARY KEY (tenant, version)
);

-- Learned-sparse (SPLADE) postings.
CREATE TABLE splade (key bigint NOT NULL, term int NOT NULL, weight real NOT NULL);
CREATE INDEX splade_terms ON splade (term, key);
CREATE INDEX splade_keys ON splade (key);

CREATE TABLE idempotency (key text PRIMARY KEY, result text NOT NULL);

-- The live corpus vocabulary (surface words, chunk frequencies) for query rewriting.
CREATE TABLE vocabulary (
    tenant text NOT NULL,
    word text NOT NULL,
    df bigint NOT NULL,
    PRIMARY KEY (tenant, word)
);
