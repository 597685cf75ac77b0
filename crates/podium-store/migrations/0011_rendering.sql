-- Rendering: each pod manager's network template, user data kept as bytes, and config drives
-- served at unguessable, expiring URLs (the token is stored hashed; the image is rebuilt from
-- the documents stored here, byte for byte, on every download).
ALTER TABLE pod_managers ADD COLUMN network_template TEXT;

-- Claims made before this migration keep their user data in the text column `user_data`.
ALTER TABLE claims ADD COLUMN user_data_bytes BYTEA;

CREATE TABLE config_drives (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    host_id      TEXT NOT NULL,
    claim_id     TEXT,
    phase        TEXT NOT NULL,
    meta_data    TEXT NOT NULL,
    network_data TEXT NOT NULL,
    user_data    BYTEA,
    sha256       TEXT NOT NULL,
    size         BIGINT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL
);
CREATE INDEX config_drives_expiry ON config_drives (expires_at);
CREATE INDEX config_drives_host ON config_drives (host_id);
