-- The audit log: every authenticated request that asks for a change (POST, PUT, PATCH, DELETE):
-- who (the token, its role, its tenant), what (the route, the path as sent, the resource it
-- created or named last), when, and how it ended (the status, the error's code). Never a body,
-- so nothing secret is kept. Kept for the retention the admin sets.
CREATE TABLE audit_events (
    id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    token_id TEXT NOT NULL,
    role TEXT NOT NULL,
    tenant_id TEXT,
    method TEXT NOT NULL,
    route TEXT NOT NULL,
    path TEXT NOT NULL,
    resource_id TEXT,
    status INTEGER NOT NULL,
    error_code TEXT
);
CREATE INDEX audit_events_tenant ON audit_events (tenant_id, id);
CREATE INDEX audit_events_resource ON audit_events (resource_id, id);
CREATE INDEX audit_events_at ON audit_events (at);
