//! Events (`events`): written by the database's own triggers (migration 0016) in the
//! transaction that changes a claim, a host or an operation; read here in `seq` order, which is
//! the order of the commits, and forgotten after a retention.

use super::moment;
use podium_types::Timestamp;
use sqlx::Row;

use crate::{Datastore, StoreError};
use podium_types::{ClaimId, EventAction, EventFilter, EventKind, HostId, TenantId};

/// One event, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    pub seq: i64,
    pub at: Timestamp,
    pub kind: EventKind,
    pub action: EventAction,
    pub resource_id: String,
    pub pod_manager: Option<String>,
    pub tenant_id: Option<TenantId>,
    pub claim_id: Option<ClaimId>,
    pub host_id: Option<HostId>,
    /// The changed row's state, its columns by name as the trigger wrote them.
    pub data: serde_json::Value,
}

/// Where a watcher's reading stands: the newest event, and the newest the retention forgot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventHorizon {
    pub newest: i64,
    pub forgotten_through: i64,
}

fn row(r: &sqlx::any::AnyRow) -> Result<EventRow, StoreError> {
    let data: String = r.try_get("data")?;
    Ok(EventRow {
        seq: r.try_get("seq")?,
        at: moment(r, "at")?,
        kind: r.try_get::<String, _>("kind")?.parse()?,
        action: r.try_get::<String, _>("action")?.parse()?,
        resource_id: r.try_get("resource_id")?,
        pod_manager: r.try_get("pod_manager")?,
        tenant_id: r
            .try_get::<Option<String>, _>("tenant_id")?
            .map(TenantId::from),
        claim_id: r
            .try_get::<Option<String>, _>("claim_id")?
            .map(ClaimId::from),
        host_id: r.try_get::<Option<String>, _>("host_id")?.map(HostId::from),
        data: serde_json::from_str(&data)
            .map_err(|e| StoreError::Corrupt(format!("event data: {e}")))?,
    })
}

impl Datastore {
    /// The newest event and the newest forgotten: every event up to `newest` is committed and
    /// readable (numbers are given at commit, in commit order).
    pub async fn events_horizon(&self) -> Result<EventHorizon, StoreError> {
        let r = sqlx::query(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM events) AS newest, \
             (SELECT through FROM events_forgotten WHERE id = 1) AS forgotten",
        )
        .fetch_one(&mut *self.reader().await?)
        .await?;
        Ok(EventHorizon {
            newest: r.try_get("newest")?,
            forgotten_through: r.try_get("forgotten")?,
        })
    }

    /// Events after `after` up to `through`, in order, that `filter` lets through; at most
    /// `limit`.
    pub async fn events_between(
        &self,
        after: i64,
        through: i64,
        filter: &EventFilter,
        limit: u32,
    ) -> Result<Vec<EventRow>, StoreError> {
        let kinds = if filter.kinds.is_empty() {
            EventKind::ALL.to_vec()
        } else {
            filter.kinds.clone()
        };
        let kind_params: Vec<String> = (0..kinds.len()).map(|i| format!("${}", 8 + i)).collect();
        let sql = format!(
            "SELECT seq, at, kind, action, resource_id, pod_manager, tenant_id, claim_id, \
             host_id, data FROM events WHERE seq > $1 AND seq <= $2 \
             AND ($3 = '' OR tenant_id = $3) AND ($4 = '' OR claim_id = $4) \
             AND ($5 = '' OR host_id = $5) \
             AND ($6 = '' OR (kind = 'operation' AND resource_id = $6)) \
             AND kind IN ({}) ORDER BY seq LIMIT $7",
            kind_params.join(", ")
        );
        let mut q = sqlx::query(&sql)
            .bind(after)
            .bind(through)
            .bind(filter.tenant.as_ref().map_or("", |t| t.as_str()))
            .bind(filter.claim.as_ref().map_or("", |c| c.as_str()))
            .bind(filter.host.as_ref().map_or("", |h| h.as_str()))
            .bind(filter.operation.as_ref().map_or("", |o| o.as_str()))
            .bind(i64::from(limit));
        for kind in kinds {
            q = q.bind(kind.as_str());
        }
        let rows = q.fetch_all(&mut *self.reader().await?).await?;
        rows.iter().map(row).collect()
    }

    /// Forgets the events older than `before`, a few thousand at a time, and remembers the
    /// newest it forgot; answers how many.
    pub async fn events_forget_before(&self, before: Timestamp) -> Result<u64, StoreError> {
        let mut forgotten = 0;
        loop {
            let mut writer = self.writer().await?;
            let mut tx = writer.begin().await?;
            let through: Option<i64> = sqlx::query_scalar(
                "SELECT MAX(seq) FROM (SELECT seq FROM events WHERE at < $1 AND seq IS NOT NULL \
                 ORDER BY seq LIMIT 5000) AS oldest",
            )
            .bind(before.to_string())
            .fetch_one(&mut *tx)
            .await?;
            let Some(through) = through else {
                return Ok(forgotten);
            };
            let n = sqlx::query("DELETE FROM events WHERE seq <= $1")
                .bind(through)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query("UPDATE events_forgotten SET through = $1 WHERE id = 1 AND through < $1")
                .bind(through)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            forgotten += n;
            if n < 5000 {
                return Ok(forgotten);
            }
        }
    }
}
