-- The deploy agent (OpenStack's Ironic Python Agent) a host runs, or is about to: a row from
-- the moment Podium boots the deploy ramdisk on the host until the host boots anything else.
-- Only while it exists does the agent's lookup answer for the host's MACs. The token the agent
-- is issued at its first lookup is kept as its sha256, to check the agent's heartbeats, and
-- sealed with the key that seals BMC credentials, for Podium's own calls to the agent (a
-- restarted Podium can still reach an agent mid-deploy).
CREATE TABLE agents (
    host_id TEXT PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
    expected_at TEXT NOT NULL,
    -- The address Podium gave the host for its ramdisk (the DHCP-less pool's): the only one it
    -- calls the agent at, whatever a heartbeat announces.
    address TEXT NOT NULL,
    token_hash TEXT,
    token_sealed TEXT,
    issued_at TEXT,
    -- From the latest heartbeat: the URL the agent announced, the certificate it serves that
    -- URL with (PEM), its version.
    callback_url TEXT,
    certificate TEXT,
    version TEXT,
    heartbeat_at TEXT,
    heartbeats BIGINT NOT NULL DEFAULT 0,
    -- When Podium last reached the agent at the host's own address, over TLS with exactly that
    -- certificate and with the token.
    verified_at TEXT
);

-- What a preprovisioning config drive tells the agent (its `api_url`), written on the drive as
-- `etc/ironic-python-agent.d/podium.conf`, where IPA reads its settings from virtual media.
ALTER TABLE config_drives ADD COLUMN agent_config TEXT;
