-- Tenants: the consumers of hosts. Their tokens live in `tokens` (role 'tenant').
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX tokens_tenant ON tokens (tenant_id);
