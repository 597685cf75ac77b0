-- IPAM: pools, their allocations, and the free address space of each pool as disjoint extents.
--
-- Addresses are keyed by `*_key`: the address as a 16-byte big-endian integer (IPv4 in the low
-- 4 bytes), which sorts the same in SQLite (memcmp on blobs) and PostgreSQL (bytea), so an IPv6
-- /64 is never enumerated: finding the lowest free address is one indexed lookup in ip_free.
CREATE TABLE ip_pools (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    family        BIGINT NOT NULL,
    subnet        TEXT NOT NULL,
    prefix        BIGINT NOT NULL,
    gateway       TEXT,
    -- JSON: dns_servers [ip], ranges [{start, end} | {subnet}], reserved [ip],
    -- pre_allocations {owner: ip}, tenants [id], plugin {name, version, sha256, config}.
    dns_servers     TEXT NOT NULL,
    ranges          TEXT NOT NULL,
    reserved        TEXT NOT NULL,
    pre_allocations TEXT NOT NULL,
    plugin          TEXT NOT NULL,
    pod_manager     TEXT REFERENCES pod_managers (uuid) ON DELETE SET NULL,
    tenants         TEXT NOT NULL,
    -- Decimal text: an IPv6 pool can hold more than 2^63 addresses.
    total         TEXT NOT NULL,
    allocated     BIGINT NOT NULL,
    -- Bumped by every change of the pool's address space; an allocation proposed under one
    -- generation commits only under the same one.
    generation    BIGINT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX ip_pools_pod_manager ON ip_pools (pod_manager);

CREATE TABLE ip_allocations (
    id         TEXT PRIMARY KEY,
    pool_id    TEXT NOT NULL REFERENCES ip_pools (id) ON DELETE CASCADE,
    address    TEXT NOT NULL,
    addr_key   BYTEA NOT NULL,
    owner      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- The invariants IPAM rests on: one holder per address, one address per owner and pool.
    UNIQUE (pool_id, addr_key),
    UNIQUE (pool_id, owner)
);
CREATE INDEX ip_allocations_owner ON ip_allocations (owner);

-- Free space: [first_key, last_key] extents, disjoint and never adjacent.
CREATE TABLE ip_free (
    pool_id   TEXT NOT NULL REFERENCES ip_pools (id) ON DELETE CASCADE,
    first_key BYTEA NOT NULL,
    last_key  BYTEA NOT NULL,
    PRIMARY KEY (pool_id, last_key)
);

-- The NIC a host boots from (its MAC), as the admin set it; the first NIC when unset.
ALTER TABLE hosts ADD COLUMN boot_mac TEXT;
