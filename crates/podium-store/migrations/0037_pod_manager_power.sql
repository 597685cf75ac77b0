-- How a pod manager's hosts are powered off (`podium_types::PowerSettings` as JSON: how long a
-- power off waits for the OS to shut down before it forces the power off); NULL: the defaults.
ALTER TABLE pod_managers ADD COLUMN power TEXT;
