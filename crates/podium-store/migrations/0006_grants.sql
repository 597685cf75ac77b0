-- Grants (Metal3's host deploy policy): a tenant may claim hosts of a pod manager, optionally
-- only those matching a label selector, and at most max_hosts of them.
CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    pod_manager TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    selector    TEXT NOT NULL,
    max_hosts   BIGINT,
    created_at  TEXT NOT NULL,
    UNIQUE (tenant_id, pod_manager)
);
CREATE INDEX grants_pod_manager ON grants (pod_manager);
