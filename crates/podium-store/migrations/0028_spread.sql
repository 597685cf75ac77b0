-- Anti-affinity. `hosts.rack`: the rack a host stands in (the outermost chassis of type Rack on
-- its path, else its outermost chassis), written with `chassis` by the chassis sync; NULL where
-- the tree names none. `claims.spread`: a group name; the claims of one tenant at one pod
-- manager in one group hold hosts of different racks.
ALTER TABLE hosts ADD COLUMN rack TEXT;
ALTER TABLE claims ADD COLUMN spread TEXT;
CREATE INDEX claims_spread ON claims (tenant_id, pod_manager, spread);
