-- The ramdisk (an ISO's URL) an inspection boots with the preprovisioning config drive, where
-- the site has DHCP-less pools; NULL: none.
ALTER TABLE pod_managers ADD COLUMN preprovisioning_image TEXT;
