-- Chassis are components of the chassis tree, not hosts: the hosts of kind `chassis` that
-- discoveries made before this release go. A claim being released from one is gone at once
-- (its deprovisioning goes with the host), its addresses with it; any other claim bound to one
-- fails, saying why (its tenant deletes it and claims again). The hosts' addresses and config
-- drives go with them, and their labels, operations, agents and composed-node records by the
-- tables' cascades.
DELETE FROM ip_allocations WHERE owner IN (
    SELECT 'claim:' || id FROM claims WHERE state = 'releasing'
        AND host_id IN (SELECT id FROM hosts WHERE kind = 'chassis'));
DELETE FROM claims WHERE state = 'releasing'
    AND host_id IN (SELECT id FROM hosts WHERE kind = 'chassis');
UPDATE claims SET state = 'failed', host_id = NULL,
    reason = 'its host was a chassis: chassis are components of the chassis tree, not hosts; delete this claim and claim again'
    WHERE host_id IN (SELECT id FROM hosts WHERE kind = 'chassis');
DELETE FROM ip_allocations WHERE owner IN (SELECT 'host:' || id FROM hosts WHERE kind = 'chassis');
DELETE FROM config_drives WHERE host_id IN (SELECT id FROM hosts WHERE kind = 'chassis');
DELETE FROM hosts WHERE kind = 'chassis';
