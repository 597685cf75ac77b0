-- Events (`GET /v1/events`): every change of a claim, a host or an operation that a watcher
-- sees, written by triggers in the transaction that makes the change, so none is ever missed
-- and none is recorded for a change that rolled back. `seq` numbers them in commit order (SQLite
-- has one writer at a time; AUTOINCREMENT never reuses a number, even once old events are
-- forgotten). `data` is the changed row's state as JSON; `tenant_id` is the tenant who may see
-- it (a claim's, or the tenant of the claim a host is or was bound to, or of the claim an
-- operation runs for).
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          TEXT NOT NULL,
    kind        TEXT NOT NULL,
    action      TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    pod_manager TEXT,
    tenant_id   TEXT,
    claim_id    TEXT,
    host_id     TEXT,
    data        TEXT NOT NULL
);
CREATE INDEX events_at ON events (at);

-- The highest `seq` forgotten by the retention: a watcher resuming from before it is told it
-- missed events.
CREATE TABLE events_forgotten (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    through BIGINT NOT NULL
);
INSERT INTO events_forgotten (id, through) VALUES (1, 0);

CREATE TRIGGER claims_created AFTER INSERT ON claims BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'claim', 'created', NEW.id, NEW.pod_manager,
            NEW.tenant_id, NEW.id, NEW.host_id,
            json_object('state', NEW.state, 'online', NEW.online, 'reason', NEW.reason,
                        'host_id', NEW.host_id));
END;
CREATE TRIGGER claims_changed AFTER UPDATE ON claims
WHEN OLD.state IS NOT NEW.state OR OLD.online IS NOT NEW.online OR OLD.reason IS NOT NEW.reason
     OR OLD.host_id IS NOT NEW.host_id
BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'claim', 'changed', NEW.id, NEW.pod_manager,
            NEW.tenant_id, NEW.id, COALESCE(NEW.host_id, OLD.host_id),
            json_object('state', NEW.state, 'online', NEW.online, 'reason', NEW.reason,
                        'host_id', NEW.host_id));
END;
CREATE TRIGGER claims_deleted AFTER DELETE ON claims BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'claim', 'deleted', OLD.id, OLD.pod_manager,
            OLD.tenant_id, OLD.id, OLD.host_id,
            json_object('state', OLD.state, 'online', OLD.online, 'reason', OLD.reason,
                        'host_id', OLD.host_id));
END;

CREATE TRIGGER hosts_created AFTER INSERT ON hosts BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'host', 'created', NEW.id, NEW.pod_manager,
            (SELECT tenant_id FROM claims WHERE id = NEW.claim_id), NEW.claim_id, NEW.id,
            json_object('state', NEW.state, 'power_state', NEW.power_state,
                        'claim_id', NEW.claim_id, 'maintenance', NEW.maintenance_since IS NOT NULL,
                        'error_type', NEW.error_type, 'error_message', NEW.error_message));
END;
CREATE TRIGGER hosts_changed AFTER UPDATE ON hosts
WHEN OLD.state IS NOT NEW.state OR OLD.power_state IS NOT NEW.power_state
     OR OLD.claim_id IS NOT NEW.claim_id OR OLD.maintenance_since IS NOT NEW.maintenance_since
     OR OLD.error_type IS NOT NEW.error_type OR OLD.error_message IS NOT NEW.error_message
BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'host', 'changed', NEW.id, NEW.pod_manager,
            (SELECT tenant_id FROM claims WHERE id = COALESCE(NEW.claim_id, OLD.claim_id)),
            COALESCE(NEW.claim_id, OLD.claim_id), NEW.id,
            json_object('state', NEW.state, 'power_state', NEW.power_state,
                        'claim_id', NEW.claim_id, 'maintenance', NEW.maintenance_since IS NOT NULL,
                        'error_type', NEW.error_type, 'error_message', NEW.error_message));
END;
CREATE TRIGGER hosts_deleted AFTER DELETE ON hosts BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'host', 'deleted', OLD.id, OLD.pod_manager,
            (SELECT tenant_id FROM claims WHERE id = OLD.claim_id), OLD.claim_id, OLD.id,
            json_object('state', OLD.state, 'power_state', OLD.power_state,
                        'claim_id', OLD.claim_id, 'maintenance', OLD.maintenance_since IS NOT NULL,
                        'error_type', OLD.error_type, 'error_message', OLD.error_message));
END;

-- Operations: created, and each change of status, attempts or error (a lease's renewal is none).
-- Operations are forgotten with their pod manager or host, never one by one: no delete event.
CREATE TRIGGER operations_created AFTER INSERT ON operations BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'operation', 'created', NEW.id, NEW.pod_manager,
            (SELECT tenant_id FROM claims WHERE id = NEW.claim_id), NEW.claim_id, NEW.host_id,
            json_object('kind', NEW.kind, 'status', NEW.status, 'attempts', NEW.attempts,
                        'error', NEW.error, 'next_attempt_at', NEW.next_attempt_at));
END;
CREATE TRIGGER operations_changed AFTER UPDATE ON operations
WHEN OLD.status IS NOT NEW.status OR OLD.attempts IS NOT NEW.attempts
     OR OLD.error IS NOT NEW.error OR OLD.next_attempt_at IS NOT NEW.next_attempt_at
BEGIN
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (strftime('%Y-%m-%dT%H:%M:%f000Z', 'now'), 'operation', 'changed', NEW.id, NEW.pod_manager,
            (SELECT tenant_id FROM claims WHERE id = NEW.claim_id), NEW.claim_id, NEW.host_id,
            json_object('kind', NEW.kind, 'status', NEW.status, 'attempts', NEW.attempts,
                        'error', NEW.error, 'next_attempt_at', NEW.next_attempt_at));
END;
