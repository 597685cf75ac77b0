-- What leasing reads, through indexes, however long the queue: with 100,000 registrations queued
-- at 100 shared services, each lease walked the whole queue (about 0.2 s of SQLite a lease, so
-- about five operations running at once in all, where 800 may).

-- Whether an operation runs at its host's own BMC (1) rather than at its pod manager's shared
-- service (0): a host's BMC is set when it is created and never changes, so this is its host's
-- `bmc_url IS NOT NULL`, kept on the operation so that leasing seeks the queue of own-BMC
-- operations instead of looking up the host of every queued operation.
ALTER TABLE operations ADD COLUMN own_bmc BIGINT NOT NULL DEFAULT 0;
UPDATE operations SET own_bmc = 1
WHERE host_id IN (SELECT id FROM hosts WHERE bmc_url IS NOT NULL);
CREATE INDEX operations_own_bmc_queue ON operations (own_bmc, status, id);

-- A host's operations by status and order: whether one of its operations is running, or queued
-- before another (one at a time, in order). Without it SQLite chose `operations_queue`
-- (status, id) and walked every queued operation before the one at hand.
CREATE INDEX operations_host_queue ON operations (host_id, status, id);
