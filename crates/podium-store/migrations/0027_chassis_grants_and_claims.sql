-- A grant may give a tenant one chassis of the pod manager (a rack, an enclosure) rather than
-- all of it, and a claim may ask for a host in one chassis: each is the chassis's id, and a host
-- qualifies when it stands in that chassis or in any chassis within it. NULL: no such bound.
ALTER TABLE grants ADD COLUMN chassis TEXT;
ALTER TABLE claims ADD COLUMN chassis TEXT;
