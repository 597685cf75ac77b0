-- When Podium last began reading a host's own BMC for the periodic refresh (NULL: never). The
-- refresh takes the hosts whose turn is oldest, a share of the fleet at a time, so every host is
-- read about once per sync interval and the reads spread evenly over it; a process marks the
-- hosts it takes, so two processes never read one host at once.
ALTER TABLE hosts ADD COLUMN refreshed_at TEXT;
CREATE INDEX hosts_refresh ON hosts (refreshed_at) WHERE bmc_url IS NOT NULL;
