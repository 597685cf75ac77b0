//! Nodes Podium composed from resource blocks: each is a host (kind `composed`), and this keeps
//! the zone and the blocks it was composed of.

use podium_types::{ClaimId, HostId, HostState, Page, Paged, PodManagerId, TenantId, Timestamp};
use sqlx::Row;

use super::{Datastore, HostRow, OperationRow, StoreError, decode, json, moment};

/// A composed node: its host's id, name and system, with what it was composed of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposedNodeRow {
    pub host_id: HostId,
    pub pod_manager: PodManagerId,
    pub name: String,
    pub system_id: String,
    /// Its host's state.
    pub state: HostState,
    pub zone: String,
    pub blocks: Vec<String>,
    /// The claim it was composed for: no other claim binds it, and it is decomposed once that
    /// claim holds another host or is gone.
    pub claim: Option<ClaimId>,
    pub created_at: Timestamp,
}

const SELECT: &str = "SELECT c.host_id, c.pod_manager, h.name, h.system_id, h.state, c.zone, \
    c.blocks, c.claim_id, c.created_at FROM composed_nodes c JOIN hosts h ON h.id = c.host_id";

fn row(r: &sqlx::any::AnyRow) -> Result<ComposedNodeRow, StoreError> {
    Ok(ComposedNodeRow {
        host_id: r.try_get::<String, _>("host_id")?.into(),
        pod_manager: r.try_get::<String, _>("pod_manager")?.into(),
        name: r.try_get("name")?,
        system_id: r.try_get("system_id")?,
        state: r
            .try_get::<String, _>("state")?
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("a stored host state: {e}")))?,
        zone: r.try_get("zone")?,
        blocks: decode("blocks", &r.try_get::<String, _>("blocks")?)?,
        claim: r.try_get::<Option<String>, _>("claim_id")?.map(Into::into),
        created_at: moment(r, "created_at")?,
    })
}

impl Datastore {
    /// Adds the host a composition made (`host`, as its driver inspected it) with the zone and
    /// blocks it was composed of, the claim it was composed for, and the operation that
    /// registers it, in one transaction. A sync that found the system first (another
    /// process's) has added the host, and maybe its record, already: that host is kept (and its
    /// `register`), its record made this one, and its id answered.
    pub async fn composed_node_add(
        &self,
        host: &HostRow,
        zone: &str,
        blocks: &[String],
        claim: Option<&ClaimId>,
        register: &OperationRow,
        now: Timestamp,
    ) -> Result<HostId, StoreError> {
        let mut writer = self.writer().await?;
        let queues = writer.queues(self);
        let mut tx = writer.begin().await?;
        let id: String = super::hosts::upsert_discovered(&host.pod_manager, host, now, now)
            .fetch_one(&mut *tx)
            .await?
            .try_get("id")?;
        if id == host.id.as_str() {
            super::operations::insert(register, queues)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query(
            "INSERT INTO composed_nodes (host_id, pod_manager, zone, blocks, claim_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (host_id) DO UPDATE SET \
             zone = excluded.zone, blocks = excluded.blocks, claim_id = excluded.claim_id",
        )
        .bind(&id)
        .bind(host.pod_manager.as_str())
        .bind(zone)
        .bind(json(&blocks))
        .bind(claim.map(ClaimId::as_str))
        .bind(now.to_string())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(id.into())
    }

    /// The node composed for a claim, if any.
    pub async fn composed_node_of_claim(
        &self,
        claim: &ClaimId,
    ) -> Result<Option<ComposedNodeRow>, StoreError> {
        let r = sqlx::query(&format!(
            "{SELECT} WHERE c.claim_id = $1 ORDER BY c.host_id LIMIT 1"
        ))
        .bind(claim.as_str())
        .fetch_optional(&mut *self.reader().await?)
        .await?;
        r.as_ref().map(row).transpose()
    }

    /// How many nodes are composed for the tenant's claims at a pod manager that still wait
    /// (pending, holding no host).
    pub async fn composed_nodes_reserved_to_waiting(
        &self,
        tenant: &TenantId,
        pod_manager: &PodManagerId,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM composed_nodes c JOIN claims k ON k.id = c.claim_id \
             WHERE k.tenant_id = $1 AND k.pod_manager = $2 AND k.state = 'pending'",
        )
        .bind(tenant.as_str())
        .bind(pod_manager.as_str())
        .fetch_one(&mut *self.reader().await?)
        .await?)
    }

    /// The nodes composed for claims that no longer want them (the claim is gone, or no longer
    /// pending) whose hosts are unclaimed, out of maintenance and available, in error or
    /// missing (not on their way somewhere): they are to be decomposed.
    pub async fn composed_nodes_unwanted(&self) -> Result<Vec<ComposedNodeRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE c.claim_id IS NOT NULL AND h.claim_id IS NULL \
             AND h.state IN ('available', 'error', 'missing') AND h.maintenance_since IS NULL \
             AND NOT EXISTS (SELECT 1 FROM claims k WHERE k.id = c.claim_id AND k.state = 'pending') \
             ORDER BY c.host_id"
        ))
        .fetch_all(&mut *self.reader().await?)
        .await?;
        rows.iter().map(row).collect()
    }

    /// The nodes composed at a pod manager, by host id.
    pub async fn composed_node_list(
        &self,
        pod_manager: &PodManagerId,
        page: &Page,
    ) -> Result<Paged<ComposedNodeRow>, StoreError> {
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE c.pod_manager = $1 AND c.host_id > $2 ORDER BY c.host_id LIMIT $3"
        ))
        .bind(pod_manager.as_str())
        .bind(page.cursor.as_deref().unwrap_or(""))
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut *self.reader().await?)
        .await?;
        let items = rows.iter().map(row).collect::<Result<Vec<_>, _>>()?;
        Ok(super::paged(items, page.limit, |c| c.host_id.to_string()))
    }

    pub async fn composed_node_get(
        &self,
        host: &HostId,
    ) -> Result<Option<ComposedNodeRow>, StoreError> {
        let r = sqlx::query(&format!("{SELECT} WHERE c.host_id = $1"))
            .bind(host.as_str())
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        r.as_ref().map(row).transpose()
    }

    /// Keeps a composed node's host from being claimed while its system is decomposed: puts it in
    /// maintenance for `reason`, in one conditional write, unless a claim holds it (a bind takes
    /// only a host out of maintenance, in a conditional write of its own, so one of the two
    /// wins). Answers whether this call put it in maintenance (`false`: it was already), or the
    /// claim that holds it; `None` where the host is gone.
    pub async fn composed_node_hold(
        &self,
        host: &HostId,
        reason: &str,
        now: Timestamp,
    ) -> Result<Option<Result<bool, ClaimId>>, StoreError> {
        let mut writer = self.writer().await?;
        let held = sqlx::query(
            "UPDATE hosts SET maintenance_since = $2, maintenance_reason = $3, updated_at = $2 \
             WHERE id = $1 AND claim_id IS NULL AND maintenance_since IS NULL",
        )
        .bind(host.as_str())
        .bind(now.to_string())
        .bind(reason)
        .execute(&mut *writer)
        .await?
        .rows_affected();
        if held == 1 {
            return Ok(Some(Ok(true)));
        }
        let found = sqlx::query("SELECT claim_id FROM hosts WHERE id = $1")
            .bind(host.as_str())
            .fetch_optional(&mut *writer)
            .await?;
        let Some(found) = found else {
            return Ok(None);
        };
        Ok(Some(
            match found.try_get::<Option<String>, _>("claim_id")? {
                Some(claim) => Err(claim.into()),
                None => Ok(false),
            },
        ))
    }

    /// Ends the maintenance [`composed_node_hold`](Self::composed_node_hold) began for `reason`
    /// (a decomposition that failed), and none other.
    pub async fn composed_node_unhold(
        &self,
        host: &HostId,
        reason: &str,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE hosts SET maintenance_since = NULL, maintenance_reason = NULL, updated_at = $3 \
             WHERE id = $1 AND maintenance_reason = $2",
        )
        .bind(host.as_str())
        .bind(reason)
        .bind(now.to_string())
        .execute(&mut *self.writer().await?)
        .await?;
        Ok(())
    }

    /// Removes a host that was decomposed, with what hangs on it (its labels, operations, NICs,
    /// config drives, composition), unless a claim holds it: then nothing changes and the claim
    /// is answered. `Ok(None)` where the host is gone already.
    pub async fn composed_node_remove(
        &self,
        host: &HostId,
    ) -> Result<Option<Result<(), ClaimId>>, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let found = sqlx::query("SELECT claim_id FROM hosts WHERE id = $1")
            .bind(host.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(found) = found else {
            return Ok(None);
        };
        if let Some(claim) = found.try_get::<Option<String>, _>("claim_id")? {
            return Ok(Some(Err(claim.into())));
        }
        // Children first where no foreign key cascades.
        for sql in [
            "DELETE FROM config_drives WHERE host_id = $1",
            "DELETE FROM hosts WHERE id = $1",
        ] {
            sqlx::query(sql)
                .bind(host.as_str())
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(Some(Ok(())))
    }
}

/// A system the composition service says is composed: of which blocks, in which zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composed {
    pub system_id: String,
    pub zone: String,
    pub blocks: Vec<String>,
}

impl Datastore {
    /// Makes the composed nodes of `pod_manager` what its composition service says: each host
    /// whose system is in `composed` is of kind `composed` with those blocks (recorded now if it
    /// was not), and a host no longer composed is a `system` again, without its record. Answers
    /// how many hosts changed kind.
    pub async fn composed_nodes_sync(
        &self,
        pod_manager: &PodManagerId,
        composed: &[Composed],
        now: Timestamp,
    ) -> Result<usize, StoreError> {
        let mut writer = self.writer().await?;
        let mut tx = writer.begin().await?;
        let hosts = sqlx::query(
            "SELECT h.id, h.system_id, h.kind, c.zone, c.blocks FROM hosts h \
             LEFT JOIN composed_nodes c ON c.host_id = h.id WHERE h.pod_manager = $1",
        )
        .bind(pod_manager.as_str())
        .fetch_all(&mut *tx)
        .await?;
        let by_system: std::collections::HashMap<&str, &Composed> =
            composed.iter().map(|c| (c.system_id.as_str(), c)).collect();
        let mut changed = 0;
        for h in &hosts {
            let id: String = h.try_get("id")?;
            let system: String = h.try_get("system_id")?;
            let kind: String = h.try_get("kind")?;
            match by_system.get(system.as_str()) {
                Some(c) => {
                    let zone: Option<String> = h.try_get("zone")?;
                    let blocks: Option<String> = h.try_get("blocks")?;
                    let recorded = match (zone, blocks) {
                        (Some(zone), Some(blocks)) => {
                            zone == c.zone && decode::<Vec<String>>("blocks", &blocks)? == c.blocks
                        }
                        _ => false,
                    };
                    if recorded && kind == "composed" {
                        continue;
                    }
                    sqlx::query(
                        "INSERT INTO composed_nodes (host_id, pod_manager, zone, blocks, created_at) \
                         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (host_id) DO UPDATE SET \
                         zone = excluded.zone, blocks = excluded.blocks",
                    )
                    .bind(&id)
                    .bind(pod_manager.as_str())
                    .bind(&c.zone)
                    .bind(json(&c.blocks))
                    .bind(now.to_string())
                    .execute(&mut *tx)
                    .await?;
                    if kind != "composed" {
                        sqlx::query("UPDATE hosts SET kind = 'composed' WHERE id = $1")
                            .bind(&id)
                            .execute(&mut *tx)
                            .await?;
                        changed += 1;
                    }
                }
                None if kind == "composed" => {
                    sqlx::query("DELETE FROM composed_nodes WHERE host_id = $1")
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query("UPDATE hosts SET kind = 'system' WHERE id = $1")
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    changed += 1;
                }
                None => {}
            }
        }
        tx.commit().await?;
        Ok(changed)
    }
}
