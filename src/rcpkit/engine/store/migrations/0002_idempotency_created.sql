-- When each idempotency key was recorded, so keys past their retention can be collected
-- (`idempotency_retention_seconds`). Keys of unknown age count from this migration: each
-- keeps a full retention after the upgrade, so a retry in flight is still answered.
ALTER TABLE idempotency ADD COLUMN created timestamptz NOT NULL DEFAULT now();
CREATE INDEX idempotency_created ON idempotency (created);
