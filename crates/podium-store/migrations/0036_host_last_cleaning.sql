-- A host's last cleaning of its disks between tenants, as JSON (`podium_types::CleaningRecord`:
-- when, what it erased, whether it succeeded and what failed); NULL: never cleaned.
ALTER TABLE hosts ADD COLUMN last_cleaning TEXT;
