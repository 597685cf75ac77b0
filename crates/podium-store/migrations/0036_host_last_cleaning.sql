-- A host's last cleaning of its disks between tenants, as JSON (`podium_types::CleaningRecord`:
-- when, what it erased, whether it succeeded and what failed); NULL: never cleaned.
ALTER TABLE hosts ADD COLUMN last_cleaning TEXT;
-- A host a claim holds whose provisioning began under an earlier release may hold the claim's
-- data whatever its image was (a live system had root on the machine): marked, so that its
-- release cleans it, as every release of a claim whose provisioning began now does.
UPDATE hosts SET disks_written_for = claim_id
    WHERE claim_id IS NOT NULL AND disks_written_for IS NULL
      AND state IN ('provisioning', 'provisioned', 'deprovisioning', 'error', 'missing');
