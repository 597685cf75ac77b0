-- The claim whose image a deploy agent was last told to write to the host's disks, until a
-- cleaning of them succeeds: while it is set, the host's disks are cleaned before it is free for
-- anyone else (whatever became of the provisioning: one that failed mid-write too), and before
-- another claim's provisioning.
ALTER TABLE hosts ADD COLUMN disks_written_for TEXT;

-- Hosts holding a disk image's claim from before this column: cleaned at their release, as
-- they were.
UPDATE hosts SET disks_written_for = claim_id
WHERE claim_id IN (
    SELECT id FROM claims
    WHERE image LIKE '%"format":"raw"%' OR image LIKE '%"format":"qcow2"%'
);

-- How a pod manager's hosts take disk images and are cleaned after them (JSON: `cleaning`,
-- `allow_md5`); NULL: the defaults (metadata erase, md5 refused).
ALTER TABLE pod_managers ADD COLUMN deploy TEXT;

-- The disk a disk image is written to when a claim names none (root device hints, JSON), as
-- the admin set it for the host; NULL: none.
ALTER TABLE hosts ADD COLUMN root_device TEXT;
