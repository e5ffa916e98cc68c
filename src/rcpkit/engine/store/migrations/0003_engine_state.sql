-- Per-engine state moves into the database, so any server answers any request (issue 20):
-- feedback and the quarantine it feeds (§7.16, §15.3), memories (§7.17) and agentic
-- trajectories (§7.7.3). Tenant '' is "no tenant", as everywhere in this schema.
CREATE TABLE feedback (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    tenant text NOT NULL,
    session_id text,
    query text,
    hit_id text NOT NULL,
    doc_id text NOT NULL,
    used boolean,
    cited boolean,
    helpful boolean,
    reward double precision,
    poison boolean,
    injection boolean
);
CREATE INDEX feedback_reports ON feedback (tenant, doc_id) WHERE poison OR injection;

CREATE TABLE memories (
    memory_id text PRIMARY KEY,
    tenant text NOT NULL,
    scope text NOT NULL,
    session_id text,
    created timestamptz NOT NULL DEFAULT clock_timestamp(),
    payload jsonb NOT NULL
);
CREATE INDEX memories_latest ON memories (tenant, scope, created DESC);

-- The database's clock dates every trajectory, so servers whose clocks disagree agree on
-- when one expires.
CREATE TABLE trajectories (
    tenant text NOT NULL,
    session_id text NOT NULL,
    expires timestamptz NOT NULL,
    seen text[] NOT NULL DEFAULT '{}',
    state jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (tenant, session_id)
);
CREATE INDEX trajectories_expires ON trajectories (expires);
