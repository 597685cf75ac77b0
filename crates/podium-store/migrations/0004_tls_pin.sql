-- A pinned certificate (SHA-256 of its DER encoding) as a third way to trust an endpoint.
ALTER TABLE pod_managers ADD COLUMN tls_pinned_sha256 TEXT;
ALTER TABLE hosts ADD COLUMN bmc_tls_pinned_sha256 TEXT;
