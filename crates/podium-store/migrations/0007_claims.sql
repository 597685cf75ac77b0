-- Claims: a tenant's request for a host, and the host bound to it.
CREATE TABLE claims (
    id             TEXT PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    pod_manager    TEXT NOT NULL,
    selector       TEXT NOT NULL,
    min_cpu        BIGINT NOT NULL,
    min_memory_mib BIGINT NOT NULL,
    image          TEXT NOT NULL,
    user_data      TEXT,
    meta_data      TEXT,
    network_data   TEXT,
    online         BIGINT NOT NULL,
    state          TEXT NOT NULL,
    reason         TEXT,
    host_id        TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX claims_tenant ON claims (tenant_id);
CREATE INDEX claims_state ON claims (state, pod_manager);
