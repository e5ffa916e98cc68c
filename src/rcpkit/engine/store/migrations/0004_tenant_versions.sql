-- Each tenant's own version sequence and floor (§7.7.1, §15.6; engine/store/tenant_versions.py):
-- a tenant is shown the number of its own commits, and retention keeps its own last N, so
-- another tenant's writes neither move its versions nor expire its pins and cursors.
CREATE TABLE tenant_versions (
    tenant text NOT NULL,
    seq bigint NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (tenant, seq)
);
CREATE TABLE tenant_floors (
    tenant text PRIMARY KEY,
    seq bigint NOT NULL,
    version bigint NOT NULL
);
-- An index written before: every tenant's history so far is its version 1.
INSERT INTO tenant_versions (tenant, seq, version)
    SELECT DISTINCT d.tenant, 1, v.version FROM documents AS d, versions AS v WHERE v.version > 0;
INSERT INTO tenant_floors (tenant, seq, version)
    SELECT tenant, seq, version FROM tenant_versions;
