-- The firmware settings a pod manager's hosts are given before they are `available` (JSON:
-- `bios`, `secure_boot`), applied by each inspection; NULL: none, as before the setting.
ALTER TABLE pod_managers ADD COLUMN firmware_profile TEXT;
