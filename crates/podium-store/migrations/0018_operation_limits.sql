-- The admin's limits on how many operations of a site run at once, across every process (NULL:
-- the default). service_limit: at the site's shared Redfish service (its hosts without a BMC of
-- their own, and the site's own work); NULL is the server's --operations-per-pod-manager.
-- site_limit: at the whole site, its hosts with their own BMC included; NULL is none.
ALTER TABLE pod_managers ADD COLUMN service_limit BIGINT;
ALTER TABLE pod_managers ADD COLUMN site_limit BIGINT;
