-- Durable operations: a worker leases an operation (lease_owner, lease_expires_at) and renews the
-- lease while it runs; a lease whose holder died expires and another worker (or the same process
-- after a restart) takes the operation over. Transient failures put it back in the queue until
-- next_attempt_at; attempts counts the tries.
ALTER TABLE operations ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE operations ADD COLUMN next_attempt_at TEXT;
ALTER TABLE operations ADD COLUMN lease_owner TEXT;
ALTER TABLE operations ADD COLUMN lease_expires_at TEXT;
ALTER TABLE operations ADD COLUMN claim_id TEXT;
CREATE INDEX operations_due ON operations (status, next_attempt_at);
CREATE INDEX operations_claim ON operations (claim_id);
-- Operations left running by a version without leases were lost with their process: due now.
UPDATE operations SET lease_expires_at = COALESCE(started_at, created_at) WHERE status = 'running';
