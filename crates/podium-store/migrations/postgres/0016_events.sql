-- Events (`GET /v1/events`): every change of a claim, a host or an operation that a watcher
-- sees, written by triggers in the transaction that makes the change, so none is ever missed
-- and none is recorded for a change that rolled back. `data` is the changed row's state as
-- JSON; `tenant_id` is the tenant who may see it (a claim's, or the tenant of the claim a host is
-- or was bound to, or of the claim an operation runs for).
--
-- `seq` numbers events in commit order, which a watcher resuming after the last it saw relies
-- on: a number taken when the row is written would let a later-committing transaction publish a
-- lower one after a watcher moved past it. So rows are written without one, and a deferred
-- trigger numbers them at commit, under a transaction-scoped advisory lock: transactions that
-- change what is watched commit one after another for that instant only (the lock is taken after
-- every other lock the transaction holds, so it cannot deadlock with them).
CREATE SEQUENCE events_seq;
CREATE TABLE events (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    seq         BIGINT UNIQUE,
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

CREATE FUNCTION podium_events_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- 'podi', 'evts': a key no other user of the database is likely to take.
    PERFORM pg_advisory_xact_lock(1886350441, 1702261875);
    UPDATE events SET seq = nextval('events_seq') WHERE id = NEW.id;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER events_number AFTER INSERT ON events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION podium_events_number();

CREATE FUNCTION podium_now() RETURNS TEXT LANGUAGE sql AS $$
    SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

CREATE FUNCTION podium_claim_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r claims;
    host TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
        host := OLD.host_id;
    ELSE
        r := NEW;
        host := NEW.host_id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF (OLD.state, OLD.online, OLD.reason, OLD.host_id)
           IS NOT DISTINCT FROM (NEW.state, NEW.online, NEW.reason, NEW.host_id) THEN
            RETURN NULL;
        END IF;
        host := COALESCE(NEW.host_id, OLD.host_id);
    END IF;
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (podium_now(), 'claim',
            CASE TG_OP WHEN 'INSERT' THEN 'created' WHEN 'UPDATE' THEN 'changed' ELSE 'deleted' END,
            r.id, r.pod_manager, r.tenant_id, r.id, host,
            json_build_object('state', r.state, 'online', r.online, 'reason', r.reason,
                              'host_id', r.host_id)::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER claims_events AFTER INSERT OR UPDATE OR DELETE ON claims
    FOR EACH ROW EXECUTE FUNCTION podium_claim_event();

CREATE FUNCTION podium_host_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r hosts;
    claim TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
        claim := OLD.claim_id;
    ELSE
        r := NEW;
        claim := NEW.claim_id;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF (OLD.state, OLD.power_state, OLD.claim_id, OLD.maintenance_since, OLD.error_type,
            OLD.error_message)
           IS NOT DISTINCT FROM (NEW.state, NEW.power_state, NEW.claim_id, NEW.maintenance_since,
                                 NEW.error_type, NEW.error_message) THEN
            RETURN NULL;
        END IF;
        claim := COALESCE(NEW.claim_id, OLD.claim_id);
    END IF;
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (podium_now(), 'host',
            CASE TG_OP WHEN 'INSERT' THEN 'created' WHEN 'UPDATE' THEN 'changed' ELSE 'deleted' END,
            r.id, r.pod_manager, (SELECT tenant_id FROM claims WHERE id = claim), claim, r.id,
            json_build_object('state', r.state, 'power_state', r.power_state,
                              'claim_id', r.claim_id, 'maintenance', r.maintenance_since IS NOT NULL,
                              'error_type', r.error_type, 'error_message', r.error_message)::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER hosts_events AFTER INSERT OR UPDATE OR DELETE ON hosts
    FOR EACH ROW EXECUTE FUNCTION podium_host_event();

-- Operations: created, and each change of status, attempts or error (a lease's renewal is none).
-- Operations are forgotten with their pod manager or host, never one by one: no delete event.
CREATE FUNCTION podium_operation_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF (OLD.status, OLD.attempts, OLD.error, OLD.next_attempt_at)
           IS NOT DISTINCT FROM (NEW.status, NEW.attempts, NEW.error, NEW.next_attempt_at) THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO events (at, kind, action, resource_id, pod_manager, tenant_id, claim_id, host_id, data)
    VALUES (podium_now(), 'operation',
            CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'changed' END,
            NEW.id, NEW.pod_manager, (SELECT tenant_id FROM claims WHERE id = NEW.claim_id),
            NEW.claim_id, NEW.host_id,
            json_build_object('kind', NEW.kind, 'status', NEW.status, 'attempts', NEW.attempts,
                              'error', NEW.error, 'next_attempt_at', NEW.next_attempt_at)::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER operations_events AFTER INSERT OR UPDATE ON operations
    FOR EACH ROW EXECUTE FUNCTION podium_operation_event();
