-- Requests one driver call sends a site's shared Redfish service at once (a step's fan-out, as a
-- sync's reads of its systems); NULL: the server's --plugin-parallel-requests.
ALTER TABLE pod_managers ADD COLUMN request_limit BIGINT;
