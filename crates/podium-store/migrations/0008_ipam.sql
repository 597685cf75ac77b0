-- IPAM: pools and their allocations.
--
-- An address is keyed by `addr_key`: the address as a 16-byte big-endian integer (IPv4 in the
-- low 4 bytes), which sorts the same in SQLite (memcmp on blobs) and PostgreSQL (bytea). The free
-- space of a pool is not stored: each process derives it from the pool's ranges and these rows
-- (host/src/ipam), so an IPv6 /64 is never enumerated.
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
    -- Bumped by every change of the pool's definition; an allocation proposed under one
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
