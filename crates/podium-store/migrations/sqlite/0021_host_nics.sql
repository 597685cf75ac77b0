-- The MACs of every host's NICs, one row each, for the claims whose networkData names NICs:
-- "a host with a NIC of this MAC" is an indexed lookup instead of a text search through the
-- NICs' JSON. Kept by triggers from `hosts.nics`, in the transaction of the write, so no writer
-- can forget it.
CREATE TABLE host_nics (
    host_id TEXT NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
    mac     TEXT NOT NULL,
    PRIMARY KEY (host_id, mac)
);
CREATE INDEX host_nics_mac ON host_nics (mac);

INSERT OR IGNORE INTO host_nics (host_id, mac)
    SELECT h.id, lower(json_extract(n.value, '$.mac'))
    FROM hosts h, json_each(h.nics) n
    WHERE json_extract(n.value, '$.mac') IS NOT NULL;

CREATE TRIGGER host_nics_insert AFTER INSERT ON hosts
BEGIN
    INSERT OR IGNORE INTO host_nics (host_id, mac)
        SELECT NEW.id, lower(json_extract(value, '$.mac')) FROM json_each(NEW.nics)
        WHERE json_extract(value, '$.mac') IS NOT NULL;
END;

CREATE TRIGGER host_nics_update AFTER UPDATE OF nics ON hosts WHEN OLD.nics IS NOT NEW.nics
BEGIN
    DELETE FROM host_nics WHERE host_id = NEW.id;
    INSERT OR IGNORE INTO host_nics (host_id, mac)
        SELECT NEW.id, lower(json_extract(value, '$.mac')) FROM json_each(NEW.nics)
        WHERE json_extract(value, '$.mac') IS NOT NULL;
END;
