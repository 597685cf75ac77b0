-- The BIOS's and the BMC's firmware versions as the host's last firmware read found them (an
-- inspection, a firmware update, a read of its firmware); NULL: never read, or not reported.
ALTER TABLE hosts ADD COLUMN bios_version TEXT;
ALTER TABLE hosts ADD COLUMN bmc_version TEXT;
