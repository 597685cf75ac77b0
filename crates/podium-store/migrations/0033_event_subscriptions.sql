-- Redfish event subscriptions (`/redfish/v1/EventService/Subscriptions`): where Podium pushes
-- the events a tenant (or, with `tenant_id` NULL, the admin) may see. `delivered_through` is
-- the last event (`events.seq`) handled for the subscription, delivered or given up on after its
-- tries; `headers_sealed` the HTTP headers to send with each event, encrypted (they may carry a
-- credential) and never shown; `leased_until` when the process sending its next batch lets go
-- of it, so that one process at a time sends to it.
CREATE TABLE event_subscriptions (
    id TEXT PRIMARY KEY,
    tenant_id TEXT REFERENCES tenants (id) ON DELETE CASCADE,
    destination TEXT NOT NULL,
    context TEXT NOT NULL,
    event_types TEXT NOT NULL,
    headers_sealed TEXT,
    delivered_through BIGINT NOT NULL,
    failures BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    leased_until TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX event_subscriptions_tenant ON event_subscriptions (tenant_id);
