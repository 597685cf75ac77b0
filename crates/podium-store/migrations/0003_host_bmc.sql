-- A host may carry its own BMC endpoint (the Metal3 model: one BMC per machine) under a pod
-- manager that then acts as a site. The pod manager's sync leaves such hosts alone.
ALTER TABLE hosts ADD COLUMN bmc_url TEXT;
ALTER TABLE hosts ADD COLUMN bmc_auth_sealed TEXT;
ALTER TABLE hosts ADD COLUMN bmc_tls_verify BIGINT NOT NULL DEFAULT 1;
ALTER TABLE hosts ADD COLUMN bmc_tls_ca_bundle TEXT;
