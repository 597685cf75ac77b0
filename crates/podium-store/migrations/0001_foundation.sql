-- Plugins (the wasm itself is kept in the database so every Podium process on one database
-- sees the same set) and API tokens (hashed).
CREATE TABLE plugins (
    sha256      TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    version     TEXT NOT NULL,
    world       TEXT NOT NULL,
    description TEXT NOT NULL,
    size        BIGINT NOT NULL,
    source      TEXT NOT NULL,
    wasm        BYTEA NOT NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (name, version)
);

CREATE TABLE tokens (
    id          TEXT PRIMARY KEY,
    hash        TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL,
    tenant_id   TEXT,
    read_only   BIGINT NOT NULL DEFAULT 0,
    description TEXT NOT NULL DEFAULT '',
    expires_at  TEXT,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
