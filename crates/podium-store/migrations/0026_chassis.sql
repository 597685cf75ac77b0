-- The component tree (issue 42): the chassis behind each pod manager, as its driver's
-- `discover-chassis` reports them, kept as their own kind of component. A chassis is known by
-- its pod manager and the driver's id of it (`chassis_id`); `parent` is the driver's id of the
-- chassis it stands in (NULL at the top of the tree: a rack, or a lone enclosure). A chassis
-- the driver stops reporting is marked `missing`, never deleted, as a host is.
CREATE TABLE chassis (
    id           TEXT PRIMARY KEY,
    pod_manager  TEXT NOT NULL REFERENCES pod_managers (uuid) ON DELETE CASCADE,
    chassis_id   TEXT NOT NULL,
    name         TEXT NOT NULL,
    chassis_type TEXT NOT NULL,
    manufacturer TEXT,
    model        TEXT,
    serial       TEXT,
    location     TEXT,
    power_state  TEXT,
    health       TEXT,
    parent       TEXT,
    -- The chassis it stands in, outermost first: a JSON array of the id, name and type of each,
    -- written by the sync, so that reading a chassis costs no walk up the tree.
    path         TEXT NOT NULL,
    -- The driver's ids of the systems the chassis holds (a JSON array of strings).
    systems      TEXT NOT NULL,
    state        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    UNIQUE (pod_manager, chassis_id)
);
CREATE INDEX chassis_parent ON chassis (pod_manager, parent);

-- The innermost chassis a host stands in (a blade, else its enclosure, else its rack), as the
-- last sync of its pod manager's tree found it, NULL where the tree names none; and the path to
-- it, outermost first (a JSON array of the id, name and type of each chassis), kept with the
-- host so that reading a host costs no walk up the tree.
ALTER TABLE hosts ADD COLUMN chassis TEXT;
ALTER TABLE hosts ADD COLUMN chassis_path TEXT;
CREATE INDEX hosts_chassis ON hosts (chassis);
