-- Pod managers (sites), their hosts, host labels, status history and operations.
CREATE TABLE pod_managers (
    uuid                 TEXT PRIMARY KEY,
    name                 TEXT NOT NULL UNIQUE,
    url                  TEXT NOT NULL UNIQUE,
    auth_sealed          TEXT,
    description          TEXT NOT NULL,
    location             TEXT NOT NULL,
    tls_verify           BIGINT NOT NULL,
    tls_ca_bundle        TEXT,
    driver               TEXT NOT NULL,
    ipam                 TEXT NOT NULL,
    renderer             TEXT,
    network_config_owner TEXT NOT NULL,
    status               TEXT NOT NULL,
    status_message       TEXT,
    last_probe_at        TEXT,
    redfish_link         TEXT,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
);
CREATE INDEX pod_managers_location ON pod_managers (location);
CREATE INDEX pod_managers_status ON pod_managers (status);

CREATE TABLE pod_manager_status_history (
    id          TEXT PRIMARY KEY,
    pod_manager TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    message     TEXT,
    at          TEXT NOT NULL
);
CREATE INDEX pod_manager_status_history_pm ON pod_manager_status_history (pod_manager, at);

CREATE TABLE hosts (
    id           TEXT PRIMARY KEY,
    pod_manager  TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    system_id    TEXT NOT NULL,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL,
    uuid         TEXT,
    manufacturer TEXT,
    model        TEXT,
    serial       TEXT,
    cpu_count    BIGINT NOT NULL,
    memory_mib   BIGINT NOT NULL,
    nics         TEXT NOT NULL,
    media_slots  TEXT NOT NULL,
    boot         TEXT,
    power_state  TEXT NOT NULL,
    state        TEXT NOT NULL,
    claim_id     TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    UNIQUE (pod_manager, system_id)
);
CREATE INDEX hosts_state ON hosts (state);
CREATE INDEX hosts_power_state ON hosts (power_state);

CREATE TABLE host_labels (
    host_id TEXT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
    key     TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (host_id, key)
);
CREATE INDEX host_labels_kv ON host_labels (key, value);

CREATE TABLE operations (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL,
    pod_manager TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    host_id     TEXT REFERENCES hosts (id) ON DELETE CASCADE,
    request     TEXT NOT NULL,
    error       TEXT,
    created_at  TEXT NOT NULL,
    started_at  TEXT,
    finished_at TEXT
);
CREATE INDEX operations_host ON operations (host_id, created_at);
CREATE INDEX operations_pm ON operations (pod_manager, created_at);
