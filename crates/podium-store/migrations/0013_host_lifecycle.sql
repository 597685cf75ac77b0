-- The host lifecycle (docs/host-lifecycle.md): an error says its type, why, when and the state it
-- interrupted; a missing host remembers the state to return to; maintenance, set by the admin,
-- lies over any state (maintenance_since is set while it lasts). An operation keeps what it
-- found or did (`result`, JSON).
ALTER TABLE hosts ADD COLUMN error_type TEXT;
ALTER TABLE hosts ADD COLUMN error_message TEXT;
ALTER TABLE hosts ADD COLUMN error_from TEXT;
ALTER TABLE hosts ADD COLUMN error_at TEXT;
ALTER TABLE hosts ADD COLUMN missing_from TEXT;
ALTER TABLE hosts ADD COLUMN maintenance_reason TEXT;
ALTER TABLE hosts ADD COLUMN maintenance_since TEXT;
ALTER TABLE operations ADD COLUMN result TEXT;
-- Leasing walks the queue in id order (store/operations.rs).
CREATE INDEX operations_queue ON operations (status, id);
-- Before this migration only a provisioning could end in `error`, and a missing host came back
-- `available` unless it was claimed.
UPDATE hosts SET error_type = 'provisioning', error_from = 'provisioning', error_at = updated_at
    WHERE state = 'error';
UPDATE hosts SET missing_from = 'available' WHERE state = 'missing';
