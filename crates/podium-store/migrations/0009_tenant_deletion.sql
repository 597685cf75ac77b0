-- A tenant being deleted with `release`: its tokens are revoked and its grants gone at once,
-- and the row goes once the last of its claims is released (its hosts deprovisioned).
ALTER TABLE tenants ADD COLUMN deleting_at TEXT;
