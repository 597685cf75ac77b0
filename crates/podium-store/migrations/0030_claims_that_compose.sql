-- Claims that compose (issue 42). `claims.compose` (0 or 1): where no free host matches the
-- claim, Podium composes a node for it. `composed_nodes.claim_id`: the claim a node was composed
-- for, its reservation: no other claim binds that node, and once the claim holds another host
-- or is gone, the node is decomposed (when its host is available and unclaimed). No foreign
-- key: a released claim's row goes, and the reservation must outlive it until the node is
-- decomposed.
ALTER TABLE claims ADD COLUMN compose BIGINT NOT NULL DEFAULT 0;
ALTER TABLE composed_nodes ADD COLUMN claim_id TEXT;
CREATE INDEX composed_nodes_claim ON composed_nodes (claim_id);
