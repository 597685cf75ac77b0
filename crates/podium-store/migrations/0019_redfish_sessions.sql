-- Redfish sessions (`/redfish/v1/SessionService/Sessions`). A session's token stands for the
-- Podium token that opened it and only its sha256 is kept. It is always read joined to that
-- token, so revoking or expiring the token ends its sessions at once.
CREATE TABLE redfish_sessions (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    token_id TEXT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    user_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT NOT NULL
);
CREATE INDEX redfish_sessions_token ON redfish_sessions (token_id);
CREATE INDEX redfish_sessions_last_used ON redfish_sessions (last_used_at);
