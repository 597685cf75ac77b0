-- The NIC a host boots from, by MAC, as the admin set it (one of the host's NICs); NULL means
-- the first NIC of its inventory. DHCP-less preprovisioning configures this NIC.
ALTER TABLE hosts ADD COLUMN boot_mac TEXT;
