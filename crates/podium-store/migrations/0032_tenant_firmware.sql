-- What a pod manager's tenants may change of the hosts they claim (JSON: `bios_attributes`,
-- `secure_boot`, `firmware_update`); NULL: nothing, as before the setting.
ALTER TABLE pod_managers ADD COLUMN tenant_firmware TEXT;
