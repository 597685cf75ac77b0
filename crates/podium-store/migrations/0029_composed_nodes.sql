-- Composed nodes (issue 42): the systems a pod manager's composition service composed of its
-- resource blocks, by Podium or not. Each is a host, which Podium gives the kind `composed`; this
-- row keeps the zone and the blocks it was composed of. It goes with its host.
CREATE TABLE composed_nodes (
    host_id     TEXT PRIMARY KEY REFERENCES hosts (id) ON DELETE CASCADE,
    pod_manager TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    zone        TEXT NOT NULL,
    blocks      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX composed_nodes_pod_manager ON composed_nodes (pod_manager, host_id);
