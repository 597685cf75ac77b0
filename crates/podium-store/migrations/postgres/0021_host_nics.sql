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

INSERT INTO host_nics (host_id, mac)
    SELECT DISTINCT h.id, lower(n ->> 'mac')
    FROM hosts h, jsonb_array_elements(h.nics::jsonb) n
    WHERE n ->> 'mac' IS NOT NULL
    ON CONFLICT DO NOTHING;

CREATE FUNCTION podium_host_nics() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM host_nics WHERE host_id = NEW.id;
    END IF;
    INSERT INTO host_nics (host_id, mac)
        SELECT DISTINCT NEW.id, lower(n ->> 'mac') FROM jsonb_array_elements(NEW.nics::jsonb) n
        WHERE n ->> 'mac' IS NOT NULL
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER host_nics_insert AFTER INSERT ON hosts
    FOR EACH ROW EXECUTE FUNCTION podium_host_nics();
CREATE TRIGGER host_nics_update AFTER UPDATE OF nics ON hosts
    FOR EACH ROW WHEN (OLD.nics IS DISTINCT FROM NEW.nics) EXECUTE FUNCTION podium_host_nics();
